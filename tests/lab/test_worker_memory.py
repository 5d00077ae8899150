"""The worker's address-space cap, tried in a child process so the test runner keeps its own."""

from __future__ import annotations

import subprocess
import sys

CHILD = """
import sys
from lab.limits import cap_address_space
cap_address_space(int(sys.argv[1]))
try:
    block = bytearray(int(sys.argv[2]) * 1024 * 1024)
except MemoryError:
    print("MemoryError")
else:
    print("allocated", len(block) // (1024 * 1024))
"""


def run_child(cap_mb: int, allocate_mb: int) -> str:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(cap_mb), str(allocate_mb)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_an_allocation_past_the_cap_raises_memory_error() -> None:
    assert run_child(cap_mb=512, allocate_mb=1024) == "MemoryError"


def test_an_allocation_under_the_cap_succeeds() -> None:
    assert run_child(cap_mb=2048, allocate_mb=256) == "allocated 256"


def test_zero_means_no_cap() -> None:
    assert run_child(cap_mb=0, allocate_mb=1024) == "allocated 1024"
