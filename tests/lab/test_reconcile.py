"""The reconciler re-sends lost tasks and recovers rows whose worker died (tasks run inline)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from lab.analyses import engine, intake, reconcile
from lab.analyses.models import Analysis, options_key

pytestmark = pytest.mark.django_db

SOURCE = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}"


def _row(**fields: Any) -> Analysis:
    template = intake.store_template(engine.load_pasted(SOURCE))
    return Analysis.objects.create(
        template=template, analyzer_version=engine.analyzer_version(),
        options_key=options_key({}),
        **fields,
    )


def _ago(seconds: float) -> Any:
    return timezone.now() - timedelta(seconds=seconds)


def test_a_row_never_sent_is_sent_and_runs() -> None:
    analysis = _row()
    assert reconcile.reconcile_analyses().resent == (analysis.pk,)
    analysis.refresh_from_db()
    assert analysis.status != Analysis.Status.QUEUED and analysis.attempts == 1


def test_a_row_sent_a_moment_ago_is_left_to_its_message(settings: Any) -> None:
    settings.LAB_QUEUED_STALE_SECONDS = 60
    analysis = _row(enqueued_at=_ago(5))
    assert reconcile.reconcile_analyses().resent == ()
    assert Analysis.objects.get(pk=analysis.pk).status == Analysis.Status.QUEUED


def test_a_running_row_whose_lease_expired_runs_again() -> None:
    analysis = _row(status="running", claimed_by="dead", lease_until=_ago(1), attempts=1)
    reconcile.reconcile_analyses()
    analysis.refresh_from_db()
    assert analysis.attempts == 2 and analysis.claimed_by != "dead"
    assert not analysis.is_pending


def test_a_running_row_with_a_live_lease_is_left_alone() -> None:
    analysis = _row(status="running", claimed_by="live", lease_until=timezone.now() + timedelta(60))
    assert reconcile.reconcile_analyses() == reconcile.Reconciled((), ())
    assert Analysis.objects.get(pk=analysis.pk).claimed_by == "live"


def test_a_row_whose_workers_died_too_often_is_failed(settings: Any) -> None:
    settings.LAB_MAX_ATTEMPTS = 2
    analysis = _row(status="running", claimed_by="dead", lease_until=_ago(1), attempts=2)
    assert reconcile.reconcile_analyses().failed == (analysis.pk,)
    analysis.refresh_from_db()
    assert analysis.status == Analysis.Status.FAILED and "died 2 times" in analysis.error


def test_submitting_a_stuck_template_again_sends_its_analysis_again() -> None:
    stuck = _row(enqueued_at=_ago(3600))
    again = intake.request_analysis(stuck.template)
    assert again.pk == stuck.pk
    assert not Analysis.objects.get(pk=stuck.pk).is_pending
