"""Keep a running analysis' lease alive while its task runs, so a dead worker shows in seconds.

The lease used to outlast the hard time limit (160 s): only then could the reconciler tell a
dead worker from a slow one. A task now renews its lease every LAB_HEARTBEAT_SECONDS from a
thread; the analysis itself runs in a child process (analyzer.analysis.isolated), so the task's
own process waits in `select` and the thread always gets its turn. A worker that dies stops
renewing, its lease expires after LAB_LEASE_SECONDS, and the next reconciler pass re-sends the
row. A stuck task that stays alive is ended by the hard time limit (lab.analyses.tasks).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.db import connection

from lab.analyses import claims

log = logging.getLogger(__name__)


@contextmanager
def kept_lease(analysis_id: int, task_id: str) -> Iterator[None]:
    """Renew the task's lease on the row until the block ends."""
    stop = threading.Event()
    beat = threading.Thread(
        target=_renew_until, args=(stop, analysis_id, task_id), daemon=True,
        name=f"lease-{analysis_id}",
    )
    beat.start()
    try:
        yield
    finally:
        stop.set()
        beat.join(timeout=1.0)  # a renewal waiting on a database lock finishes on its own


def _renew_until(stop: threading.Event, analysis_id: int, task_id: str) -> None:
    try:
        while not stop.wait(settings.LAB_HEARTBEAT_SECONDS):
            try:
                if not claims.renew(analysis_id, task_id):
                    return  # finished, or taken by another task: nothing left to keep
            except Exception:  # noqa: BLE001 - a missed beat only shortens the lease
                log.warning("analysis %s: could not renew its lease", analysis_id, exc_info=True)
    finally:
        connection.close()  # this thread's own connection
