"""The Celery application; its configuration comes from Django settings (CELERY_*)."""

from __future__ import annotations

import os

from celery import Celery
from celery.signals import worker_process_init, worker_ready

from lab.limits import cap_address_space

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lab.settings")

app = Celery("lab")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def _cap_worker_memory(**_: object) -> None:
    # The renderer bounds time, output and ranges, but a few single C-level operations on a
    # template's own data (comparing two huge self-made lists) run without a check point; an
    # address-space cap turns a runaway one into a MemoryError the task reports.
    from django.conf import settings

    cap_address_space(settings.LAB_WORKER_MEMORY_MB)


worker_process_init.connect(_cap_worker_memory)


def _keep_a_push_loop(**_: object) -> None:
    # Each pool process pushes the statuses it stores (lab.pushes says why a kept loop).
    from lab import pushes

    pushes.keep_a_loop()


worker_process_init.connect(_keep_a_push_loop)


def _reconcile_at_start(**_: object) -> None:
    # Rows left queued or running by a worker that died, or sent to a broker that lost them,
    # are picked up as soon as a worker is back, before beat's first tick.
    app.send_task("lab.analyses.tasks.reconcile_analyses_task")
    app.send_task("lab.corpus.tasks.reconcile_runs_task")


worker_ready.connect(_reconcile_at_start)
