"""The lease heartbeat: a running task keeps its row's lease alive from a thread."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.utils import timezone

from lab.analyses import claims, engine, heartbeat, intake
from lab.analyses.models import Analysis

# The heartbeat writes from its own thread, on its own connection: rows must be committed.
pytestmark = pytest.mark.django_db(transaction=True)


def _running(task_id: str) -> Analysis:
    template = intake.store_template(engine.load_pasted("{{ messages[0].content }}"))
    analysis = Analysis.objects.create(
        template=template, analyzer_version=engine.analyzer_version(), options_key="k"
    )
    assert claims.claim(analysis.pk, task_id)
    return analysis


def test_a_held_lease_is_renewed_while_the_block_runs(settings: Any) -> None:
    settings.LAB_LEASE_SECONDS = 0.5
    settings.LAB_HEARTBEAT_SECONDS = 0.1
    analysis = _running("task-1")
    with heartbeat.kept_lease(analysis.pk, "task-1"):
        time.sleep(1.5)  # three leases long
        lease = Analysis.objects.get(pk=analysis.pk).lease_until
        assert lease is not None and lease > timezone.now()
    time.sleep(1.0)  # the heartbeat stopped with the block: the lease runs out
    lease = Analysis.objects.get(pk=analysis.pk).lease_until
    assert lease is not None and lease < timezone.now()


def test_the_heartbeat_stops_once_another_task_holds_the_row(settings: Any) -> None:
    settings.LAB_LEASE_SECONDS = 0.3
    settings.LAB_HEARTBEAT_SECONDS = 0.05
    analysis = _running("task-1")
    with heartbeat.kept_lease(analysis.pk, "task-1"):
        Analysis.objects.filter(pk=analysis.pk).update(claimed_by="task-2")
        time.sleep(0.5)
        lease = Analysis.objects.get(pk=analysis.pk).lease_until
        assert lease is not None and lease < timezone.now()  # task-1 no longer renews it
