"""A corpus run's progress socket: the progress at once, then what the workers announce."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from test_consumers import run_in_thread

from lab.corpus import entries, notify, runs
from lab.corpus.models import CorpusRun, CorpusTemplate
from lab.corpus.routing import websocket_urlpatterns

pytestmark = pytest.mark.django_db(transaction=True)  # the consumer reads from another thread

SMALL = ("Qwen3-Coder", "google-gemma-2-2b-it")


def test_the_dashboard_hears_each_stored_row_and_the_close(
    settings: Any, corpus_templates: Path, tmp_path: Path
) -> None:
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    for name in SMALL:
        shutil.copy(corpus_templates / f"{name}.jinja", tmp_path)
    entries.import_directory(tmp_path)
    first, second = CorpusTemplate.objects.order_by("name")
    run = CorpusRun.objects.create(analyzer_version="x", total=2)

    async def scenario() -> list[Any]:
        path = f"/ws/corpus/runs/{run.pk}/progress/"
        communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), path)
        connected, _ = await communicator.connect()
        assert connected
        heard = [await communicator.receive_json_from(timeout=10)]
        await sync_to_async(runs.evaluate_entry)(run.pk, first.pk)
        heard.append(await communicator.receive_json_from(timeout=10))
        notify._last_push.clear()  # the next row comes later than the throttle allows
        await sync_to_async(runs.evaluate_entry)(run.pk, second.pk)
        heard.append(await communicator.receive_json_from(timeout=10))
        await sync_to_async(runs.close_run)(run.pk)  # forced: never throttled
        heard.append(await communicator.receive_json_from(timeout=10))
        await communicator.disconnect()
        return heard

    heard = run_in_thread(scenario)
    assert [(m["status"], m["completed"], m["total"]) for m in heard] == [
        ("queued", 0, 2), ("running", 1, 2), ("running", 2, 2), ("done", 2, 2)
    ]


def test_rows_stored_close_together_send_one_message(settings: Any) -> None:
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    run = CorpusRun.objects.create(analyzer_version="x", total=5)
    notify._last_push.clear()

    async def scenario() -> list[Any]:
        path = f"/ws/corpus/runs/{run.pk}/progress/"
        communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), path)
        await communicator.connect()
        await communicator.receive_json_from(timeout=10)
        for _ in range(5):
            await sync_to_async(notify.announce)(run.pk)
        heard = [await communicator.receive_json_from(timeout=10)]
        assert await communicator.receive_nothing(timeout=0.3)
        await communicator.disconnect()
        return heard

    assert len(run_in_thread(scenario)) == 1


def test_an_unknown_run_closes_the_progress_socket_with_4404() -> None:
    async def scenario() -> Any:
        communicator = WebsocketCommunicator(
            URLRouter(websocket_urlpatterns), "/ws/corpus/runs/999/progress/"
        )
        await communicator.connect()
        return await communicator.receive_output(timeout=10)

    assert run_in_thread(scenario) == {"type": "websocket.close", "code": 4404}
