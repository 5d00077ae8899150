"""App configuration for the corpus app."""

from __future__ import annotations

from django.apps import AppConfig


class CorpusConfig(AppConfig):
    name = "lab.corpus"
    label = "corpus"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Register the run's tasks with the Celery app at start-up. The web process launches
        # chords by task name; importing the module only when a run starts registers them
        # too late if the app was finalized meanwhile without them.
        from lab.corpus import tasks  # noqa: F401
