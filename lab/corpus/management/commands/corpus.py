"""`manage.py corpus sync|import DIR|run`: fill the corpus, run it, wait for the verdict."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from lab.corpus import entries, launch, manifest
from lab.corpus.models import CorpusRun


class Command(BaseCommand):
    help = "Sync the corpus from the Hub, import a folder of templates, or run the corpus."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
        sync = actions.add_parser("sync", help="fetch the manifest's templates from the Hub")
        sync.add_argument("--manifest", type=Path, default=manifest.DEFAULT_MANIFEST)
        sync.add_argument(
            "--lock",
            type=Path,
            default=None,
            help="also write the resolved commits to this JSON file",
        )
        folder = actions.add_parser("import", help="load a folder of template files")
        folder.add_argument("directory", type=Path)
        run = actions.add_parser("run", help="evaluate every active template (Celery workers)")
        run.add_argument("--wait", action="store_true", help="wait for the run to finish")
        run.add_argument(
            "--timeout", type=float, default=1800, help="seconds --wait waits (default 1800)"
        )
        run.add_argument(
            "--fail-on-regression",
            action="store_true",
            help="with --wait: exit with status 1 if a template got worse",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        handler = {"sync": self.sync, "import": self.import_, "run": self.run}
        handler[options["action"]](options)

    def sync(self, options: dict[str, Any]) -> None:
        try:
            listed = manifest.read_manifest(options["manifest"])
        except manifest.ManifestError as exc:
            raise CommandError(str(exc)) from exc
        report = manifest.sync(listed, options["lock"])
        self.stdout.write(f"sync: {report.describe()}")
        refuse_clashes(report)

    def import_(self, options: dict[str, Any]) -> None:
        folder: Path = options["directory"]
        if not folder.is_dir():
            raise CommandError(f"{folder}: not a directory")
        report = entries.import_directory(folder)
        self.stdout.write(f"import: {report.describe()}")
        refuse_clashes(report)

    def run(self, options: dict[str, Any]) -> None:
        with transaction.atomic():
            run = launch.start_run("command")
        self.stdout.write(f"run {run.pk}: {run.total} template(s), analyzer {run.analyzer_version}")
        if not options["wait"]:
            return
        run = self.wait(run.pk, options["timeout"])
        self.stdout.write(describe(run))
        if options["fail_on_regression"] and run.is_worse:
            raise CommandError(
                f"run {run.pk} made {run.regressions} template(s) worse than run {run.baseline_id}",
                returncode=1,
            )

    def wait(self, run_id: int, timeout: float) -> CorpusRun:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            run = CorpusRun.objects.get(pk=run_id)
            if not run.is_pending:
                return run
            time.sleep(1)
        raise CommandError(
            f"run {run_id} did not finish within {timeout:g} s (are Celery workers running?)"
        )


def refuse_clashes(report: entries.Report) -> None:
    """Exit with status 1 naming the templates left out because another source holds the name.

    Everything else was imported; a script (or CI) must still learn that some files were not.
    """
    if report.clashes:
        names = ", ".join(clash.split(":", 1)[0] for clash in report.clashes)
        raise CommandError(
            f"{len(report.clashes)} template(s) not imported: another source's entry holds "
            f"the name ({names}); rename the files to keep both",
            returncode=1,
        )


def describe(run: CorpusRun) -> str:
    """Summarize a finished run in one line."""
    against = (
        f"; against run {run.baseline_id}: {run.regressions} worse, "
        f"{run.improvements} better, {run.changed} changed"
        if run.baseline_id
        else ""
    )
    return (
        f"run {run.pk} {run.status}: {run.total} template(s), {run.errors} error(s), "
        f"round trip failed for {run.round_trip_failed}, grammar failed for "
        f"{run.grammar_failed}{against}"
    )
