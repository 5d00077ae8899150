"""The live textbox's websocket, driven through Channels' test communicator."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from lab.analyses import engine, intake, samples
from lab.analyses.models import Analysis
from lab.analyses.routing import websocket_urlpatterns
from lab.analyses.tasks import run_analysis

pytestmark = pytest.mark.django_db(transaction=True)  # the consumer reads from another thread

T = TypeVar("T")


def run_in_thread(make: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine on a fresh loop in its own thread (Playwright may own this thread's)."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(make())  # type: ignore[arg-type]
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            box["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(30)
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


async def _exchange(path: str, messages: list[dict[str, Any]], replies: int) -> list[Any]:
    communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), path)
    connected, _ = await communicator.connect()
    assert connected
    received = [await communicator.receive_json_from(timeout=10)]
    for message in messages:
        await communicator.send_json_to(message)
    for _ in range(replies):
        received.append(await communicator.receive_json_from(timeout=10))
    await communicator.disconnect()
    return received


@pytest.fixture
def done_analysis(corpus_templates: Path) -> Analysis:
    source = (corpus_templates / "Qwen-Qwen3-0.6B.jinja").read_text()
    analysis = intake.request_analysis(intake.store_template(engine.load_pasted(source)))
    run_analysis(analysis.pk)
    analysis.refresh_from_db()
    return analysis


def test_an_unknown_analysis_closes_the_socket_with_4404() -> None:
    async def scenario() -> Any:
        communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), "/ws/a/999/live/")
        await communicator.connect()
        return await communicator.receive_output(timeout=10)

    assert run_in_thread(scenario) == {"type": "websocket.close", "code": 4404}


def test_an_unknown_message_type_gets_an_error_reply(done_analysis: Analysis) -> None:
    path = f"/ws/a/{done_analysis.pk}/live/"
    replies = run_in_thread(lambda: _exchange(path, [{"type": "shout"}], replies=1))
    assert replies[-1] == {"type": "error", "message": "unknown message type 'shout'"}


def test_text_streamed_in_chunks_comes_back_parsed(done_analysis: Analysis) -> None:
    sample = samples.sample_for(done_analysis).text
    chunks = [sample[at : at + 5] for at in range(0, len(sample), 5)]
    messages = [{"type": "append", "chunk": chunk} for chunk in chunks] + [{"type": "finish"}]
    path = f"/ws/a/{done_analysis.pk}/live/"
    replies = run_in_thread(lambda: _exchange(path, messages, replies=len(messages)))
    assert {reply["type"] for reply in replies} == {"state"}
    final = replies[-1]
    [call] = final["tool_calls"]
    # Qwen3 writes the call as JSON in <tool_call>...</tool_call>; the consumer's default tools
    # are the sample's, so get_weather is known.
    start = sample.index("<tool_call>") + len("<tool_call>")
    expected = json.loads(sample[start : sample.rindex("</tool_call>")])
    assert call["name"] == expected["name"] == "get_weather"
    assert json.loads(call["arguments"]) == expected["arguments"]
    assert final["problems"] == [] and final["deviations"] == [] and final["delta_count"] > 0


def test_a_reset_replaces_the_text_and_options_restart_the_parse(done_analysis: Analysis) -> None:
    path = f"/ws/a/{done_analysis.pk}/live/"
    messages = [
        {"type": "append", "chunk": "<think>plan</think>Hi"},
        {"type": "reset", "text": "Bye"},
        {"type": "finish"},
        {
            "type": "options",
            "options": {"reasoning_format": "none"},
            "text": "<think>plan</think>Hi",
        },
        {"type": "finish"},
    ]
    replies = run_in_thread(lambda: _exchange(path, messages, replies=len(messages)))
    after_reset, kept_reasoning = replies[3], replies[5]
    assert (after_reset["content"], after_reset["reasoning"]) == ("Bye", "")
    # reasoning_format "none" leaves the reasoning in the content.
    assert kept_reasoning["reasoning"] == ""
    assert "<think>plan</think>" in kept_reasoning["content"]


def test_a_marker_kept_as_text_comes_back_as_a_problem_with_its_caret(
    done_analysis: Analysis,
) -> None:
    typed = '<tool_call>\n{"name": "no_such_function", "arguments": {}}\n</tool_call>'
    messages = [{"type": "append", "chunk": typed}, {"type": "finish"}]
    path = f"/ws/a/{done_analysis.pk}/live/"
    final = run_in_thread(lambda: _exchange(path, messages, replies=2))[-1]
    assert final["content"] == typed and final["tool_calls"] == []
    [problem] = final["problems"]
    # `{"name": "` is 10 characters: the name starts at column 11 of line 2, offset 22.
    assert {k: problem[k] for k in ("kept", "offset", "line", "column")} == {
        "kept": "<tool_call>",
        "offset": 22,
        "line": 2,
        "column": 11,
    }
    assert problem["context"].endswith("\n" + " " * 10 + "^")
    assert problem["message"].startswith("`<tool_call>` at offset 0 kept as text: expected")
    [deviation] = final["deviations"]
    assert (deviation["kind"], deviation["action"], deviation["offset"]) == (
        "malformed_call", "kept_as_content", 22)
    assert deviation["context"] == problem["context"]
