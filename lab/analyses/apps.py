"""App configuration for the analyses app."""

from __future__ import annotations

from django.apps import AppConfig


class AnalysesConfig(AppConfig):
    name = "lab.analyses"
    label = "analyses"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Register the tasks with the Celery app as soon as Django is up: a shared task first
        # imported later is only added to apps still active, and a closed app is not.
        from django.conf import settings

        from lab.analyses import engine, tasks  # noqa: F401

        # The analysis child and the web server compile each template: once is enough.
        engine.share_compiled_templates(settings.LAB_CODE_CACHE_DIR)
