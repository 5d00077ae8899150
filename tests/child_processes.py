"""The processes a test started, as Linux lists them (tests kill them with real signals)."""

from __future__ import annotations

from pathlib import Path


def children(pid: int) -> list[int]:
    """Direct child processes of `pid`, started by any of its threads."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except OSError:
            continue
    return found
