"""Allow `python -m analyzer ...`."""

from __future__ import annotations

import sys

from analyzer.cli.main import main

sys.exit(main())
