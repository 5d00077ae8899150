"""Claims: a task takes a row with a lease; only a live holder keeps it; dying workers fail it."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from celery.exceptions import TimeLimitExceeded
from django.utils import timezone

from lab.analyses import claims, engine, intake
from lab.analyses.models import Analysis
from lab.analyses.tasks import run_analysis

pytestmark = pytest.mark.django_db


def _queued() -> Analysis:
    template = intake.store_template(engine.load_pasted("{{ messages[0].content }}"))
    return Analysis.objects.create(
        template=template, analyzer_version=engine.analyzer_version(), options_key="k"
    )


def test_a_claim_takes_a_queued_row_with_a_lease() -> None:
    analysis = _queued()
    assert claims.claim(analysis.pk, "task-1")
    analysis.refresh_from_db()
    assert (analysis.status, analysis.claimed_by, analysis.attempts) == ("running", "task-1", 1)
    assert analysis.lease_until is not None and analysis.lease_until > timezone.now()


def test_a_live_lease_keeps_other_tasks_out_until_it_expires() -> None:
    analysis = _queued()
    claims.claim(analysis.pk, "task-1")
    assert not claims.claim(analysis.pk, "task-2")
    Analysis.objects.filter(pk=analysis.pk).update(lease_until=timezone.now() - timedelta(1))
    assert claims.claim(analysis.pk, "task-2")


def test_a_redelivered_task_takes_back_the_row_its_killed_child_held() -> None:
    analysis = _queued()
    claims.claim(analysis.pk, "task-1")
    assert claims.claim(analysis.pk, "task-1")
    assert Analysis.objects.get(pk=analysis.pk).attempts == 2


def test_a_row_whose_workers_keep_dying_is_failed_not_run_again(settings: Any) -> None:
    settings.LAB_MAX_ATTEMPTS = 2
    analysis = _queued()
    assert claims.claim(analysis.pk, "t") and claims.claim(analysis.pk, "t")
    assert not claims.claim(analysis.pk, "t")
    analysis.refresh_from_db()
    assert analysis.status == Analysis.Status.FAILED
    assert "died 2 times" in analysis.error and "not tried again" in analysis.error


def test_only_the_holder_stores_an_outcome() -> None:
    analysis = _queued()
    claims.claim(analysis.pk, "task-1")
    assert not claims.finish(analysis.pk, "task-0", result_json="{}")
    assert claims.finish(analysis.pk, "task-1", error="boom")
    analysis.refresh_from_db()
    assert (analysis.status, analysis.error, analysis.lease_until) == ("failed", "boom", None)


def test_the_hard_time_limit_fails_the_row_its_task_held() -> None:
    analysis = _queued()
    claims.claim(analysis.pk, "task-1")
    run_analysis.on_failure(TimeLimitExceeded(130), "task-1", (analysis.pk,), {}, None)
    analysis.refresh_from_db()
    assert analysis.status == Analysis.Status.FAILED
    assert "hard time limit" in analysis.error and "was killed" in analysis.error


def test_a_renewal_extends_only_the_holders_lease() -> None:
    analysis = _queued()
    claims.claim(analysis.pk, "task-1")
    Analysis.objects.filter(pk=analysis.pk).update(lease_until=timezone.now())
    assert not claims.renew(analysis.pk, "task-2")
    assert claims.renew(analysis.pk, "task-1")
    analysis.refresh_from_db()
    assert analysis.lease_until is not None and analysis.lease_until > timezone.now()
    claims.finish(analysis.pk, "task-1", error="boom")
    assert not claims.renew(analysis.pk, "task-1")  # a finished row has no lease to keep
