"""Tell the dashboards watching a corpus run how far it got, over the channel layer.

The run's progress socket (lab.corpus.progress) joins the run's group; each worker that stores a
template's row, and the task that closes the run, send the run's progress there, so the page
needs no polling. A run of thousands of templates would send thousands of messages: a process
sends at most one every PUSH_INTERVAL seconds per run, and always the one that closes the run.
"""

from __future__ import annotations

import time
from typing import Literal, TypedDict

from lab import pushes
from lab.corpus.models import CorpusResult, CorpusRun

PUSH_INTERVAL = 0.5  # seconds between two progress messages of one run from one process
_last_push: dict[int, float] = {}


class ProgressMessage(TypedDict):
    """Server: the run is in this status with this many of its templates stored."""

    type: Literal["progress"]
    status: str
    completed: int
    total: int


def group_name(run_id: int) -> str:
    """The channel-layer group of the pages watching this run."""
    return f"corpus-run-{run_id}"


def progress(run_id: int) -> ProgressMessage | None:
    """The run's progress now (two indexed queries), or None if there is no such run."""
    found = CorpusRun.objects.filter(pk=run_id).values_list("status", "total").first()
    if found is None:
        return None
    completed = CorpusResult.objects.filter(run_id=run_id).count()
    return ProgressMessage(type="progress", status=found[0], completed=completed, total=found[1])


def announce(run_id: int, *, force: bool = False) -> None:
    """Send the run's progress to its group (throttled unless forced); never raise."""
    now = time.monotonic()
    if not force and now - _last_push.get(run_id, -PUSH_INTERVAL) < PUSH_INTERVAL:
        return
    _last_push[run_id] = now
    message = progress(run_id)
    if message is not None:
        pushes.push(group_name(run_id), message, f"corpus run {run_id}'s progress")
