"""Corpus runs that cannot close themselves are closed; a run can be cancelled from its page."""

from __future__ import annotations

import shutil
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from lab.corpus import entries, recovery, runs
from lab.corpus.models import CorpusResult, CorpusRun, CorpusTemplate

pytestmark = pytest.mark.django_db

SMALL = ("Qwen3-Coder", "google-gemma-2-2b-it")


@pytest.fixture
def corpus(corpus_templates: Path, tmp_path: Path) -> list[CorpusTemplate]:
    for name in SMALL:
        shutil.copy(corpus_templates / f"{name}.jinja", tmp_path)
    entries.import_directory(tmp_path)
    return list(CorpusTemplate.objects.order_by("name"))


def _run_with_one_row(corpus: list[CorpusTemplate], quiet_for: float) -> CorpusRun:
    """A run whose first template stored its row `quiet_for` seconds ago and the other none."""
    created = timezone.now() - timedelta(seconds=quiet_for)
    run = CorpusRun.objects.create(
        analyzer_version="v", total=len(corpus), status="running", created_at=created
    )
    runs.evaluate_entry(run.pk, corpus[0].pk)
    CorpusResult.objects.filter(run=run).update(created_at=created)
    return run


def test_a_run_quiet_for_too_long_is_closed_with_its_missing_templates_failed(
    corpus: list[CorpusTemplate], settings: Any
) -> None:
    settings.LAB_RUN_STALE_SECONDS = 60
    run = _run_with_one_row(corpus, quiet_for=120)
    assert recovery.close_abandoned_runs() == [run.pk]
    run.refresh_from_db()
    assert run.status == CorpusRun.Status.DONE and "tasks were lost" in run.note
    missing = CorpusResult.objects.get(run=run, entry=corpus[1])
    assert missing.status == CorpusResult.Status.ERROR and missing.error == recovery.LOST
    assert run.errors >= 1


def test_a_run_still_making_progress_is_left_open(
    corpus: list[CorpusTemplate], settings: Any
) -> None:
    settings.LAB_RUN_STALE_SECONDS = 60
    run = _run_with_one_row(corpus, quiet_for=5)
    assert recovery.close_abandoned_runs() == []
    assert CorpusRun.objects.get(pk=run.pk).is_pending


def test_a_run_with_every_row_but_no_callback_is_closed_at_once(
    corpus: list[CorpusTemplate],
) -> None:
    run = _run_with_one_row(corpus, quiet_for=0)
    runs.evaluate_entry(run.pk, corpus[1].pk)
    assert recovery.close_abandoned_runs() == [run.pk]
    assert not CorpusResult.objects.filter(run=run, status=CorpusResult.Status.ERROR).exists()


def test_a_late_chord_callback_does_not_reopen_a_cancelled_run(
    corpus: list[CorpusTemplate], client: Client
) -> None:
    run = _run_with_one_row(corpus, quiet_for=0)
    page = client.get(run.get_absolute_url()).content.decode()
    assert 'id="run-cancel"' in page
    response = client.post(f"/corpus/runs/{run.pk}/cancel/")
    assert response.status_code == 302
    run.refresh_from_db()
    assert (run.status, run.note) == (CorpusRun.Status.DONE, "cancelled")
    assert CorpusResult.objects.get(run=run, entry=corpus[1]).error == recovery.CANCELLED
    assert runs.close_pending_run(run.pk) is None
