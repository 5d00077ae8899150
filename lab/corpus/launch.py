"""Start a corpus run: create its row, then queue one task per template and the closing chord.

Apart from `runs` (what the tasks do) so that the tasks, which call `runs`, and the launch,
which queues the tasks, import each other through no cycle.
"""

from __future__ import annotations

import logging
from functools import partial

from celery import chord
from django.db import transaction
from django.utils import timezone

from lab.corpus import engine, runs
from lab.corpus.models import CorpusRun, CorpusTemplate
from lab.corpus.tasks import close_run_task, evaluate_entry_task

log = logging.getLogger(__name__)


def start_run(trigger: str = "command") -> CorpusRun:
    """Create a run over every active template and launch it once the row is committed."""
    run = CorpusRun.objects.create(
        analyzer_version=engine.analyzer_version(),
        trigger=trigger,
        total=CorpusTemplate.objects.filter(active=True).count(),
    )
    transaction.on_commit(partial(launch, run.pk))
    return run


def launch(run_id: int) -> None:
    """Queue one task per active template, and the chord callback that closes the run."""
    entries = list(CorpusTemplate.objects.filter(active=True).values_list("pk", flat=True))
    if not entries:
        runs.close_run(run_id)
        return
    try:
        header = [evaluate_entry_task.si(run_id, entry) for entry in entries]
        chord(header)(close_run_task.si(run_id))
    except Exception as exc:  # noqa: BLE001 - broker down: say so on the run, not in a log
        log.exception("corpus: could not queue run %s", run_id)
        CorpusRun.objects.filter(pk=run_id).update(
            status=CorpusRun.Status.FAILED,
            finished_at=timezone.now(),
            note=f"could not queue the tasks ({type(exc).__name__}: {exc}); is Redis running?",
        )
