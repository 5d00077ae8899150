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


async def _exchange(path: str, messages: list[Any], replies: int) -> list[Any]:
    """Send messages (dicts as JSON; bytes and str as raw binary and text frames) and collect
    the greeting and `replies` replies."""
    communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), path)
    connected, _ = await communicator.connect()
    assert connected
    received = [await communicator.receive_json_from(timeout=10)]
    for message in messages:
        if isinstance(message, bytes):
            await communicator.send_to(bytes_data=message)
        elif isinstance(message, str):
            await communicator.send_to(text_data=message)
        else:
            await communicator.send_json_to(message)
    for _ in range(replies):
        received.append(await communicator.receive_json_from(timeout=10))
    await communicator.disconnect()
    return received


def shown_after(replies: list[Any]) -> dict[str, Any]:
    """Apply state and delta replies as the page does; return the state it shows."""
    state: dict[str, Any] = {}
    for reply in replies:
        if reply["type"] == "state":
            state = json.loads(json.dumps(reply))
        elif reply["type"] == "delta":
            apply_delta(state, reply)
    return state


def apply_delta(state: dict[str, Any], delta: dict[str, Any]) -> None:
    for key, value in delta.items():
        if key in ("reasoning", "content"):
            state[key] += value
        elif key == "tool_calls":
            for change in value:
                calls = state["tool_calls"]
                if change["index"] == len(calls):
                    calls.append({"name": "", "id": "", "arguments": ""})
                call = calls[change["index"]]
                call["arguments"] += change["arguments"]
                call.update({k: change[k] for k in ("name", "id") if k in change})
        elif key != "type":
            state[key] = value


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
    assert replies[-1] == {
        "type": "error", "code": "unknown_type", "message": "unknown message type 'shout'"
    }


def test_text_streamed_in_chunks_comes_back_parsed(done_analysis: Analysis) -> None:
    sample = samples.sample_for(done_analysis).text
    chunks = [sample[at : at + 5] for at in range(0, len(sample), 5)]
    messages = [{"type": "append", "chunk": chunk} for chunk in chunks] + [{"type": "finish"}]
    path = f"/ws/a/{done_analysis.pk}/live/"
    replies = run_in_thread(lambda: _exchange(path, messages, replies=len(messages)))
    assert [reply["type"] for reply in replies[1:]] == ["delta"] * len(messages)
    final = shown_after(replies)
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
    after_reset, kept_reasoning = shown_after(replies[:4]), shown_after(replies)
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
    final = shown_after(run_in_thread(lambda: _exchange(path, messages, replies=2)))
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
        "unknown_function", "kept_as_content", 22)
    assert deviation["context"] == problem["context"]


BAD_FRAMES = [
    (b"\x00\x01", "binary_frame", "binary frames are not read: send JSON as a text frame"),
    ("not json", "not_json", "the frame is not JSON (Expecting value: line 1 column 1 (char 0))"),
    ("[1, 2]", "not_an_object", "a message is a JSON object; found an array"),
    ("[" * 100_000, "not_json", "the frame is not JSON (nested deeper than this server reads "
     "(thousands of levels of [ or {))"),
    ({"type": "options", "options": [1], "text": ""}, "bad_field",
     "`options` needs `options` as an object; found an array"),
    ({"type": "append", "chunk": 42}, "bad_field",
     "`append` needs `chunk` as a string; found a number"),
    ({"type": "append"}, "bad_field", "`append` needs `chunk` as a string; found null"),
    ({"type": "reset", "text": None}, "bad_field", "`reset` needs `text` as a string; found null"),
    ({"type": 7}, "unknown_type", "unknown message type 7"),
    ({"type": "resume", "options": {}, "text": "ab", "received": 5, "finished": False},
     "bad_field", "`received` must be 0 to 2; found 5"),
]


@pytest.mark.parametrize(("frame", "code", "message"), BAD_FRAMES,
                         ids=[str(index) for index in range(len(BAD_FRAMES))])
def test_a_bad_frame_gets_a_typed_error_and_the_socket_stays_usable(
    done_analysis: Analysis, frame: Any, code: str, message: str
) -> None:
    path = f"/ws/a/{done_analysis.pk}/live/"
    messages = [{"type": "append", "chunk": "Hel"}, frame, {"type": "append", "chunk": "lo"}]
    replies = run_in_thread(lambda: _exchange(path, messages, replies=3))
    assert replies[2] == {"type": "error", "code": code, "message": message}
    assert replies[3]["type"] == "delta" and replies[3]["content"] == "lo"
    assert shown_after(replies)["content"] == "Hello"  # the bad frame changed nothing


def test_options_without_a_parser_answer_every_later_message(done_analysis: Analysis) -> None:
    path = f"/ws/a/{done_analysis.pk}/live/"
    messages = [
        {"type": "options", "options": {"tools": [42]}, "text": ""},
        {"type": "append", "chunk": "a"},
        {"type": "append", "chunk": "b"},
        {"type": "finish"},
        {"type": "options", "options": {"tools": []}, "text": "ok"},
    ]
    replies = run_in_thread(lambda: _exchange(path, messages, replies=5))
    assert [r["type"] for r in replies[1:]] == ["unavailable"] * 4 + ["state"]
    assert replies[2]["reason"].startswith("No parser can be generated")
    assert replies[-1]["content"] == "ok"


def _reply_bytes(path: str, text: str, chunk: int) -> int:
    messages = [{"type": "append", "chunk": text[at : at + chunk]}
                for at in range(0, len(text), chunk)]
    replies = run_in_thread(lambda: _exchange(path, messages, replies=len(messages)))
    assert shown_after(replies)["content"] == text
    return sum(len(json.dumps(reply)) for reply in replies[1:])


def test_replies_carry_only_what_changed_so_bytes_back_grow_linearly(
    done_analysis: Analysis,
) -> None:
    path = f"/ws/a/{done_analysis.pk}/live/"
    text = "The weather is fine today. " * 400  # 10,800 characters
    half, whole = _reply_bytes(path, text[:5400], 4), _reply_bytes(path, text, 4)
    assert whole < 1.1 * 2 * half  # linear: twice the text, about twice the bytes
    assert whole < 40 * len(text)  # a whole-state reply per keystroke would be ~1,350x


def test_the_text_of_one_connection_is_capped_with_a_clear_message(
    done_analysis: Analysis, settings: Any
) -> None:
    settings.LAB_LIVE_MAX_CHARS = 10
    path = f"/ws/a/{done_analysis.pk}/live/"
    messages = [{"type": "append", "chunk": "abcdefgh"}, {"type": "append", "chunk": "ijk"},
                {"type": "reset", "text": "x" * 11}, {"type": "append", "chunk": "ij"}]
    replies = run_in_thread(lambda: _exchange(path, messages, replies=4))
    assert replies[2] == {
        "type": "error", "code": "text_too_long",
        "message": "the live box parses at most 10 characters; this append would make it 11."
                   " Nothing changed: shorten the text.",
    }
    assert replies[3]["code"] == "text_too_long"
    assert shown_after(replies)["content"] == "abcdefghij"


def test_a_resumed_connection_sends_only_what_the_page_lacks(done_analysis: Analysis) -> None:
    path = f"/ws/a/{done_analysis.pk}/live/"
    text = "<think>plan it</think>The answer is 42."
    first = shown_after(run_in_thread(lambda: _exchange(
        path, [{"type": "append", "chunk": text[:30]}], replies=1)))
    resume = {"type": "resume", "options": {}, "text": text, "received": first["received"],
              "finished": first["finished"]}
    replies = run_in_thread(lambda: _exchange(path, [resume], replies=1))
    reply = replies[-1]
    assert reply["type"] == "delta" and reply["received"] == len(text)
    assert "reasoning" not in reply  # the page has the reasoning already
    first_content = first["content"]
    assert first_content + reply["content"] == "The answer is 42."
    assert len(reply["content"]) == len(text) - 30
