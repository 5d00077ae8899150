"""Pushes from a Celery pool process go over one kept Redis connection, on a real Valkey."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from channels.layers import channel_layers
from channels_redis.core import RedisChannelLayer

from lab import pushes
from lab.run import start_valkey, stop

PUSHES = 12


@pytest.fixture
def redis_layer(tmp_path: Path, settings: Any) -> Iterator[str]:
    """The channel layer on a Valkey of its own; its URL."""
    valkey, url = start_valkey(tmp_path / "valkey", log=tmp_path / "valkey.log")
    settings.CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [url]}}
    }
    channel_layers.backends = {}  # built anew from the settings above
    try:
        yield url
    finally:
        channel_layers.backends = {}
        stop([valkey])


def _connections_made(url: str) -> int:
    stats = redis.Redis.from_url(url).info("stats")
    return int(stats["total_connections_received"])


async def _receive(url: str, group: str, count: int, send: Any) -> list[dict[str, Any]]:
    """Join `group` on a layer of our own, let `send` push (in a thread), read `count`."""
    listener = RedisChannelLayer(hosts=[url])
    channel = await listener.new_channel()
    await listener.group_add(group, channel)
    await asyncio.to_thread(send)
    received = [await asyncio.wait_for(listener.receive(channel), 10) for _ in range(count)]
    await listener.flush()
    return received


def _push_all(group: str) -> None:
    for number in range(PUSHES):
        pushes.push(group, {"number": number}, f"push {number}")


def test_a_pool_process_pushes_every_message_over_one_kept_connection(redis_layer: str) -> None:
    pid = os.fork()
    if pid == 0:  # a pool process: forked, then Celery's worker_process_init keeps a loop
        code = 1
        try:
            pushes.keep_a_loop()
            before = _connections_made(redis_layer)
            received = asyncio.run(
                _receive(redis_layer, "watchers", PUSHES, lambda: _push_all("watchers"))
            )
            made = _connections_made(redis_layer) - before
            numbers = [event["message"]["number"] for event in received]
            # The listener's own connection(s), the INFO reads, and one for all the pushes.
            code = 0 if numbers == list(range(PUSHES)) and made <= 4 else 2
            if code:
                print(f"numbers {numbers}, connections made {made}", flush=True)
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_without_a_kept_loop_each_push_connects_anew(redis_layer: str) -> None:
    """What the kept loop saves (and that the count above can fail): a new loop per push."""
    before = _connections_made(redis_layer)
    received = asyncio.run(_receive(redis_layer, "watchers", PUSHES, lambda: _push_all("watchers")))
    assert [event["message"]["number"] for event in received] == list(range(PUSHES))
    assert _connections_made(redis_layer) - before >= PUSHES
