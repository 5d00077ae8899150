"""The analysis page's status socket: the current status at once, then each change pushed
(lab.pushes; the worker that stores the outcome announces it, lab.analyses.notify)."""

from __future__ import annotations

from lab.analyses import notify
from lab.pushes import WatchConsumer


class StatusConsumer(WatchConsumer):
    """Push an analysis' status changes to its page."""

    url_key = "analysis_id"
    group_for = staticmethod(notify.group_name)
    state = staticmethod(notify.status_message)
