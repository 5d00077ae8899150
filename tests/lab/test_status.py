"""The analysis page's status socket: the status at once, then the worker's announcement."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from test_consumers import run_in_thread

from lab.analyses import engine, intake, notify
from lab.analyses.models import Analysis
from lab.analyses.routing import websocket_urlpatterns

pytestmark = pytest.mark.django_db(transaction=True)  # the consumer reads from another thread


def _queued() -> Analysis:
    template = intake.store_template(engine.load_pasted("{{ messages[0].content }}"))
    return Analysis.objects.create(
        template=template, analyzer_version=engine.analyzer_version(), options_key="k"
    )


def test_the_page_hears_the_status_now_and_when_the_worker_ends(settings: Any) -> None:
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    analysis = _queued()

    async def scenario() -> list[Any]:
        path = f"/ws/a/{analysis.pk}/status/"
        communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), path)
        connected, _ = await communicator.connect()
        assert connected
        heard = [await communicator.receive_json_from(timeout=10)]
        await sync_to_async(Analysis.objects.filter(pk=analysis.pk).update)(status="done")
        await sync_to_async(notify.announce)(analysis.pk)
        heard.append(await communicator.receive_json_from(timeout=10))
        await communicator.disconnect()
        return heard

    assert run_in_thread(scenario) == [
        {"type": "status", "status": "queued"},
        {"type": "status", "status": "done"},
    ]


def test_an_unknown_analysis_closes_the_status_socket_with_4404() -> None:
    async def scenario() -> Any:
        path = "/ws/a/999/status/"
        communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), path)
        await communicator.connect()
        return await communicator.receive_output(timeout=10)

    assert run_in_thread(scenario) == {"type": "websocket.close", "code": 4404}
