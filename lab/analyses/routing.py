"""Websocket URL routes."""

from __future__ import annotations

from django.urls import path

from lab.analyses.consumers import LiveParseConsumer
from lab.analyses.status import StatusConsumer

websocket_urlpatterns = [
    path("ws/a/<int:analysis_id>/live/", LiveParseConsumer.as_asgi()),
    path("ws/a/<int:analysis_id>/status/", StatusConsumer.as_asgi()),
]
