"""Allow `python -m analyzer ...`."""

from __future__ import annotations

import sys

from analyzer.cli import main

sys.exit(main())
