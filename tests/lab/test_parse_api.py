"""`POST /api/analyses/<id>/parse`: a model output parsed into a message, or streamed as SSE."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from analyzer.canonical import analysis_from_json
from analyzer.generator import generate_parser
from analyzer.parsing.options import ParseOptions
from lab.analyses import engine, intake
from lab.analyses.models import Analysis
from lab.analyses.tasks import run_analysis

pytestmark = pytest.mark.django_db
FORMATS = Path(__file__).resolve().parents[2] / "templates_corpus" / "formats"
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}}}}]
OUTPUT = ("Checking.<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n"
          "</parameter>\n</function>\n</tool_call>")


@pytest.fixture
def done(db: None) -> Analysis:
    source = (FORMATS / "tools_tagged.jinja").read_text()
    analysis = intake.request_analysis(intake.store_template(engine.load_pasted(source)))
    run_analysis(analysis.pk)
    analysis.refresh_from_db()
    return analysis


def post(client: Client, pk: int, body: Any) -> Any:
    data = body if isinstance(body, str) else json.dumps(body)
    return client.post(f"/api/analyses/{pk}/parse", data, content_type="application/json")


def test_it_answers_the_message_with_its_calls(client: Client, done: Analysis) -> None:
    response = post(client, done.pk, {"output": OUTPUT, "options": {"tools": TOOLS}})
    assert response.status_code == 200
    message = response.json()["message"]
    assert message["content"] == "Checking."
    call = message["tool_calls"][0]["function"]
    assert call["name"] == "get_weather" and json.loads(call["arguments"]) == {"city": "Paris"}
    assert response.json()["problems"] == [] and response.json()["deviations"] == []


def test_a_departure_from_the_template_is_listed_as_a_deviation(client: Client,
                                                               done: Analysis) -> None:
    broken = OUTPUT.replace("</parameter>\n", "")
    report = post(client, done.pk, {"output": broken, "options": {"tools": TOOLS}}).json()
    [deviation] = report["deviations"]
    # The value stops before the call's own closing markup: read whole, and noted where its
    # closing tag should have been (right after `Paris`, line 4).
    assert (deviation["kind"], deviation["action"]) == ("missing_close", "accepted")
    assert deviation["expected"] == "`</parameter>`" and deviation["line"] == 4
    # The API answers exactly what the analyzer's own parse reports.
    parser = generate_parser(analysis_from_json(done.result_json), ParseOptions.make(tools=TOOLS))
    assert report == json.loads(json.dumps(parser.parse_report(broken).to_dict()))


def test_it_needs_no_csrf_token(done: Analysis) -> None:
    strict = Client(enforce_csrf_checks=True)
    assert post(strict, done.pk, {"output": "hi"}).status_code == 200


def test_stream_answers_server_sent_events_of_deltas(client: Client, done: Analysis) -> None:
    response = post(client, done.pk, {"output": OUTPUT, "options": {"tools": TOOLS},
                                      "stream": True, "chunk": 7})
    assert response["Content-Type"] == "text/event-stream"
    events = [block.split("\n", 1) for block in
              b"".join(response.streaming_content).decode().strip().split("\n\n")]
    kinds = [head.removeprefix("event: ") for head, _ in events]
    assert kinds[-1] == "done" and set(kinds[:-1]) == {"delta"} and len(kinds) > 2
    deltas = [json.loads(data.removeprefix("data: "))["delta"] for _, data in events[:-1]]
    content = "".join(d.get("content", "") or "" for d in deltas)
    assert content == "Checking."
    done_event = json.loads(events[-1][1].removeprefix("data: "))
    assert done_event["message"]["tool_calls"][0]["function"]["name"] == "get_weather"
    assert done_event["deviations"] == []


@pytest.mark.parametrize(("body", "message"), [
    ("{oops", "body: expected JSON"),
    ('{"output": ' + "[" * 100_000, "body: expected JSON; found invalid JSON (nested deeper"),
    ({"options": {}}, "output: expected the model's output as a string"),
    ({"output": "x", "options": []}, "options: expected a JSON object"),
    ({"output": "x", "chunk": 0}, "chunk: expected a positive integer"),
])
def test_bad_bodies_are_json_errors(client: Client, done: Analysis, body: Any,
                                    message: str) -> None:
    response = post(client, done.pk, body)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "bad_request"
    assert message in response.json()["error"]["message"]


def test_an_unknown_analysis_is_a_json_404(client: Client, db: None) -> None:
    response = post(client, 999999, {"output": "x"})
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"


def test_get_is_refused(client: Client, done: Analysis) -> None:
    assert client.get(f"/api/analyses/{done.pk}/parse").status_code == 405


def test_a_json_member_the_template_does_not_write_is_listed_as_dropped(client: Client,
                                                                         db: None) -> None:
    source = (FORMATS / "tools_json_native.jinja").read_text()
    analysis = intake.request_analysis(intake.store_template(engine.load_pasted(source)))
    run_analysis(analysis.pk)
    analysis.refresh_from_db()
    parser = generate_parser(analysis_from_json(analysis.result_json),
                             ParseOptions.make(tools=TOOLS))
    clean = parser.parse_report('<tool_call>{"name": "get_weather", "arguments": '
                                '{"city": "Paris"}}</tool_call>')
    assert len(clean.message.tool_calls) == 1 and clean.deviations == ()  # the format's own
    output = ('<tool_call>{"type": "function", "name": "get_weather", "arguments": '
              '{"city": "Paris"}}</tool_call>')
    report = post(client, analysis.pk, {"output": output, "options": {"tools": TOOLS}}).json()
    [deviation] = report["deviations"]
    # OpenAI's `"type": "function"`: its text dropped, noted where it starts; the call read.
    assert (deviation["kind"], deviation["action"]) == ("unknown_member", "dropped")
    assert deviation["offset"] == output.index('"type"')
    assert report["message"]["tool_calls"][0]["function"]["name"] == "get_weather"
