"""The corpus run's progress socket: the progress at once, then each change pushed
(lab.pushes; workers announce it as they store rows, and the closing task once more when the
run ends, lab.corpus.notify)."""

from __future__ import annotations

from lab.corpus import notify
from lab.pushes import WatchConsumer


class ProgressConsumer(WatchConsumer):
    """Push a corpus run's progress to its dashboard."""

    url_key = "run_id"
    group_for = staticmethod(notify.group_name)
    state = staticmethod(notify.progress)
