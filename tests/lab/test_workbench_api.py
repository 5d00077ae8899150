"""JSON endpoints: render a conversation, compare two templates, the engine flags."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from analyzer.analysis.playground import RenderRequest, render_conversation
from analyzer.render.loading import load_template_file
from lab.analyses import engine, intake
from lab.analyses.models import Template
from lab.analyses.tasks import run_analysis

pytestmark = pytest.mark.django_db
FORMATS = Path(__file__).resolve().parents[2] / "templates_corpus" / "formats"
USER = [{"role": "user", "content": "Hi"}]


def stored(name: str) -> Template:
    return intake.store_template(engine.load_pasted((FORMATS / name).read_text()))


def post(client: Client, url: str, body: Any) -> Any:
    return client.post(url, json.dumps(body), content_type="application/json")


def test_render_answers_the_prompt_and_what_the_template_reads(client: Client) -> None:
    template = stored("think_forced_closed.jinja")
    answer = post(client, f"/api/templates/{template.sha256}/render",
                  {"messages": USER, "kwargs": {"enable_thinking": False, "mood": 1}}).json()
    expected = render_conversation(
        load_template_file(FORMATS / "think_forced_closed.jinja"),
        RenderRequest.make(USER, kwargs={"enable_thinking": False, "mood": 1})).prompt
    assert answer["prompt"] == expected and expected.endswith("</think>\n\n")
    assert "enable_thinking" in answer["template_kwargs"] and answer["unused_kwargs"] == ["mood"]
    assert answer["request"]["kwargs"] == {"enable_thinking": False, "mood": 1}


def test_render_with_vs_answers_both_and_their_diff(client: Client) -> None:
    template = stored("think_forced_closed.jinja")
    base = {"messages": USER, "kwargs": {"enable_thinking": True}}
    answer = post(client, f"/api/templates/{template.sha256}/render",
                  {**base, "vs": {**base, "kwargs": {"enable_thinking": False}}}).json()
    assert answer["changed_inputs"] == ["kwargs.enable_thinking"] and not answer["identical"]
    d = answer["diff"]
    assert d["prefix"] + d["left"] + d["suffix"] == answer["left"]["prompt"]
    assert d["prefix"] + d["right"] + d["suffix"] == answer["right"]["prompt"]


@pytest.mark.parametrize(("body", "status", "code"), [
    ("[1]", 400, "bad_request"),
    ({"messages": [{"content": "no role"}]}, 422, "render_failed"),
])
def test_render_errors_are_json(client: Client, body: Any, status: int, code: str) -> None:
    template = stored("plain.jinja")
    data = body if isinstance(body, str) else json.dumps(body)
    response = client.post(f"/api/templates/{template.sha256}/render", data,
                           content_type="application/json")
    assert response.status_code == status and response.json()["error"]["code"] == code


def test_render_of_an_unknown_template_is_a_json_404(client: Client) -> None:
    response = post(client, "/api/templates/0000/render", {"messages": USER})
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"


def test_compare_answers_the_canonical_comparison(client: Client) -> None:
    a, b = stored("think_tag_based.jinja"), stored("think_forced_open.jinja")
    response = client.get(f"/api/compare/{a.sha256}/{b.sha256}/")
    data = response.json()
    assert (data["sha256_a"], data["sha256_b"]) == (a.sha256, b.sha256)
    assert any(change["field"] == "reasoning.mode" for change in data["analysis"])
    assert response.content == client.get(f"/api/compare/{a.sha256}/{b.sha256}/").content


def test_serve_answers_each_engines_flags(client: Client) -> None:
    analysis = intake.request_analysis(stored("tools_tagged.jinja"))
    run_analysis(analysis.pk)
    data = client.get(f"/api/analyses/{analysis.pk}/serve").json()
    engines = {e["engine"]: e for e in data["engines"]}
    assert engines["vllm"]["tool_parser"] == "qwen3_coder" and engines["vllm"]["ok"]
    assert "--tool-call-parser qwen3_coder" in engines["sglang"]["command_line"]
    assert data["structural_tag"]["available"] is False
