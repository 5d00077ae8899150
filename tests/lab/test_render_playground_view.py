"""The render playground page (lab/analyses/playground.py and its view), through the client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from lab.analyses import engine, intake, playground
from lab.analyses.models import Analysis

pytestmark = pytest.mark.django_db


@pytest.fixture
def qwen3(corpus_templates: Path, django_capture_on_commit_callbacks: Any) -> Analysis:
    source = (corpus_templates / "Qwen-Qwen3-0.6B.jinja").read_text()
    with django_capture_on_commit_callbacks(execute=True):
        analysis = intake.ingest_paste(source)
    analysis.refresh_from_db()
    assert analysis.status == Analysis.Status.DONE
    return analysis


def side(prefix: str, messages: list[dict[str, Any]], **extra: Any) -> dict[str, str]:
    fields = {"messages": json.dumps(messages), "kwargs": "{}", "add_generation_prompt": "on"}
    fields.update({k: v if isinstance(v, str) else json.dumps(v) for k, v in extra.items()})
    return {f"{prefix}-{name}": value for name, value in fields.items()}


USER = [{"role": "user", "content": "Hi <b>there</b>"}]


def test_the_page_starts_with_an_example_on_both_sides(client: Client, qwen3: Analysis) -> None:
    page = client.get(f"/a/{qwen3.pk}/render/").content.decode()
    assert 'name="a-messages"' in page and 'name="b-messages"' in page
    assert "get_weather" in page and "enable_thinking" in page
    assert 'id="playground-result"' not in page


def test_one_side_renders_the_prompt_exactly_and_escaped(client: Client, qwen3: Analysis) -> None:
    response = client.get(f"/a/{qwen3.pk}/render/", side("a", USER))
    page = response.content.decode()
    assert response.status_code == 200
    assert "<|im_start|>" in engine.source_of(qwen3.template).source
    assert '<span class="tok">&lt;|im_start|&gt;</span>user' in page
    assert "Hi &lt;b&gt;there&lt;/b&gt;" in page and "<b>there" not in page
    assert 'id="playground-b"' not in page


def test_two_sides_show_their_difference_and_which_inputs_differ(
    client: Client, qwen3: Analysis
) -> None:
    query = {
        **side("a", USER, kwargs={"enable_thinking": True}),
        **side("b", USER, kwargs={"enable_thinking": False}),
        "compare": "1",
    }
    page = client.get(f"/a/{qwen3.pk}/render/", query).content.decode()
    assert "<code>kwargs.enable_thinking</code>" in page
    b_pane = page.split('id="playground-b"')[1]
    assert 'class="seg diff"' in b_pane and "&lt;think&gt;" in b_pane


def test_identical_sides_say_no_difference(client: Client, qwen3: Analysis) -> None:
    query = {**side("a", USER), **side("b", USER), "compare": "1"}
    page = client.get(f"/a/{qwen3.pk}/render/", query).content.decode()
    assert "No difference: both sides render the same prompt." in page


@pytest.mark.parametrize(
    ("messages", "message"),
    [
        ("[{", "Messages must be JSON"),
        ('{"role": "user"}', "Messages must be a JSON list"),
    ],
)
def test_bad_inputs_are_shown_on_the_form(
    client: Client, qwen3: Analysis, messages: str, message: str
) -> None:
    response = client.get(f"/a/{qwen3.pk}/render/", {**side("a", []), "a-messages": messages})
    assert response.status_code == 422
    assert message in response.content.decode()


def test_generation_prompt_and_continue_together_are_refused(
    client: Client, qwen3: Analysis
) -> None:
    query = side("a", USER, continue_final_message="on")
    response = client.get(f"/a/{qwen3.pk}/render/", query)
    assert response.status_code == 422
    assert "expected at most one of them" in response.content.decode()


def test_a_render_over_its_bound_says_which_limit_and_the_page_stays_up(
    client: Client, qwen3: Analysis, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A clock no render can meet: the child process is killed and the page says why.
    monkeypatch.setattr(playground, "RENDER_SECONDS", 0.001)
    response = client.get(f"/a/{qwen3.pk}/render/", side("a", USER))
    page = response.content.decode()
    assert response.status_code == 200
    assert "the render was stopped: it took longer than 0.001 s (wall clock)" in page
    assert 'name="a-messages"' in page
