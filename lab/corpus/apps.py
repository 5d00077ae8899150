"""App configuration for the corpus app."""

from __future__ import annotations

from django.apps import AppConfig


class CorpusConfig(AppConfig):
    name = "lab.corpus"
    label = "corpus"
    default_auto_field = "django.db.models.BigAutoField"
