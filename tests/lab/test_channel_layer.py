"""The live socket over the real Redis channel layer stays open while idle.

channels-redis waits for messages with a blocking read; a redis-py socket timeout no longer
than that read timed out and closed every live socket (1011) every ~5.5 s.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from channels_redis.core import RedisChannelLayer
from django.conf import settings
from websockets.sync.client import connect

from lab.analyses import engine, intake
from lab.analyses.models import Analysis
from lab.analyses.tasks import run_analysis
from lab.run import free_port, start_valkey, start_web, stop

pytestmark = pytest.mark.django_db(transaction=True)  # daphne reads the row from its process

IDLE_SECONDS = 30


def test_the_layer_socket_timeout_outlasts_its_blocking_read() -> None:
    assert settings.CHANNEL_LAYER_SOCKET_TIMEOUT > RedisChannelLayer.brpop_timeout + 5


@pytest.fixture(scope="module")
def web(test_database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Daphne with the Redis channel layer on a real Valkey; its ws:// base URL."""
    logs = tmp_path_factory.mktemp("channel-layer")
    valkey, redis_url = start_valkey(logs / "valkey", log=logs / "valkey.log")
    env = {**os.environ, "REDIS_URL": redis_url, "DATABASE_URL": test_database_url}
    processes = [valkey]
    try:
        port = free_port()
        processes.append(start_web(env, "127.0.0.1", port, log=logs / "web.log"))
        yield f"127.0.0.1:{port}"
    finally:
        stop(processes)


def test_a_live_socket_idle_for_30_s_still_parses(web: str, corpus_templates: Path) -> None:
    source = (corpus_templates / "Qwen-Qwen3-0.6B.jinja").read_text()
    analysis = intake.request_analysis(intake.store_template(engine.load_pasted(source)))
    run_analysis(analysis.pk)
    assert Analysis.objects.get(pk=analysis.pk).status == Analysis.Status.DONE
    url = f"ws://{web}/ws/a/{analysis.pk}/live/"
    with connect(url, origin=f"http://{web}", open_timeout=10) as socket:  # type: ignore[arg-type]
        assert json.loads(socket.recv(timeout=10))["type"] == "state"
        time.sleep(IDLE_SECONDS)
        socket.send(json.dumps({"type": "append", "chunk": "Hello after a pause"}))
        reply = json.loads(socket.recv(timeout=10))
    assert reply["type"] == "state"
    assert "Hello after a pause" in reply["content"]
