"""App configuration for the analyses app."""

from __future__ import annotations

from django.apps import AppConfig


class AnalysesConfig(AppConfig):
    name = "lab.analyses"
    label = "analyses"
    default_auto_field = "django.db.models.BigAutoField"
