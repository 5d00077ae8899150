"""Websocket URL routes."""

from __future__ import annotations

from django.urls import path

from lab.analyses.consumers import LiveParseConsumer

websocket_urlpatterns = [
    path("ws/a/<int:analysis_id>/live/", LiveParseConsumer.as_asgi()),
]
