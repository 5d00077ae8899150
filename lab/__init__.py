"""Template Lab's web app: Django project, Celery app and the analyses app."""

from __future__ import annotations

from lab.celery import app as celery_app

__all__ = ["celery_app"]
