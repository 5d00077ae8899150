"""Allow `python -m analyzer ...`."""

from __future__ import annotations

import sys

from analyzer.analysis.isolated import cap_address_space
from analyzer.cli.main import main

# The command line caps its own memory (templates are untrusted); the analysis itself runs in
# a child process with a tighter cap and a wall clock (analyzer.analysis.isolated).
CLI_ADDRESS_SPACE = 1536 * 1024**2  # 1.5 GiB

cap_address_space(CLI_ADDRESS_SPACE)
sys.exit(main())
