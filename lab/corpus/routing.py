"""Websocket URL routes of the corpus app."""

from __future__ import annotations

from django.urls import path

from lab.corpus.progress import ProgressConsumer

websocket_urlpatterns = [
    path("ws/corpus/runs/<int:run_id>/progress/", ProgressConsumer.as_asgi()),
]
