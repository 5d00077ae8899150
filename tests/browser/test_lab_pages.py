"""The lab in a real browser: paste, watch, read the pairs, parse live; Hub; escaping."""

from __future__ import annotations

import json
import os
import re
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

ANALYSIS_URL = re.compile(r"/a/\d+/$")


@pytest.fixture
def qwen3(corpus_templates: Path) -> str:
    return (corpus_templates / "Qwen-Qwen3-0.6B.jinja").read_text()


def paste_and_wait(page: Page, source: str, status: str = "done") -> None:
    page.goto("/")
    page.locator("#id_source").fill(source)
    page.locator("#paste-submit").click()
    expect(page).to_have_url(ANALYSIS_URL)
    expect(page.locator("#analysis-status .badge")).to_have_text(status, timeout=30_000)


def test_a_pasted_template_is_analyzed_and_parses_typed_output_live(
    page: Page, qwen3: str, screenshot: Callable[..., Path]
) -> None:
    paste_and_wait(page, qwen3)
    expect(page.locator("#cmp-R1 .pane")).to_have_count(2)
    expect(page.locator("#cmp-T1 .seg.marker").first).to_be_visible()
    screenshot("analysis-qwen3")
    screenshot("analysis-qwen3-summary", "#summary")
    screenshot("analysis-qwen3-pair-T1", "#cmp-T1")
    screenshot("analysis-qwen3-parser", "#parser-panel")

    # A marker in the summary jumps to its place in the pair that produced it.
    link = page.locator("#marker-table a.marker-link").first
    anchor = link.get_attribute("href")
    link.click()
    expect(page).to_have_url(re.compile(re.escape(anchor or "#missing") + "$"))

    # The live box starts with the template's own rendering of the example call, parsed.
    expect(page.locator("#live-tool-calls .tool-name")).to_have_text("get_weather", timeout=15_000)

    # Type an output by hand: reasoning, then a call with our own arguments.
    box = page.locator("#live-input")
    box.fill("")
    typed = (
        "<think>\nThe user wants the weather.\n</think>\n\n<tool_call>\n"
        + json.dumps({"name": "get_weather", "arguments": {"city": "Paris <b>&</b>"}})
        + "\n</tool_call>"
    )
    box.press_sequentially(typed)
    expect(page.locator("#live-reasoning")).to_have_text(
        "The user wants the weather.\n", timeout=15_000
    )
    arguments = page.locator("#live-tool-calls .tool-arguments")
    expect(arguments).to_have_count(1)
    expect(arguments).to_contain_text('"city": "Paris <b>&</b>"')
    expect(page.locator("#live-tool-calls .tool-name")).to_have_text("get_weather")
    screenshot("live-parse-typed", "#live")


def test_the_status_moves_from_queued_to_done_when_the_worker_says_so(
    page: Page, lab_stack: Any, corpus_templates: Path
) -> None:
    source = (corpus_templates / "mistralai-Mistral-Nemo-Instruct-2407.jinja").read_text()
    os.kill(lab_stack.worker.pid, signal.SIGSTOP)  # hold the worker so the queue is visible
    requests: list[str] = []
    try:
        page.goto("/")
        page.locator("#id_source").fill(source)
        page.locator("#paste-submit").click()
        expect(page.locator("#analysis-status .badge")).to_have_text("queued")
        url = page.url
        page.on("request", lambda request: requests.append(request.url))
        page.wait_for_timeout(1500)  # a polling page would ask twice in this time
        assert requests == []
    finally:
        os.kill(lab_stack.worker.pid, signal.SIGCONT)
    # The worker's "done" arrives over the status socket; the page then loads the result.
    expect(page.locator("#analysis-status .badge")).to_have_text("done", timeout=30_000)
    expect(page.locator("#cmp-T1")).to_be_visible()
    assert page.url == url and requests.count(url) == 1


def test_replay_streams_the_sample_back_in_chunks(page: Page, qwen3: str) -> None:
    paste_and_wait(page, qwen3)
    sample = page.locator("#live-input").get_attribute("data-sample") or ""
    assert "<tool_call>" in sample
    page.locator("#live-speed").select_option("16")
    page.locator("#live-tick").select_option("10")
    page.locator("#live-replay").click()
    expect(page.locator("#live-input")).to_have_value(sample, timeout=15_000)
    expect(page.locator("#live-tool-calls .tool-name")).to_have_count(1, timeout=15_000)


def test_the_share_button_copies_the_permalink(page: Page, qwen3: str) -> None:
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    paste_and_wait(page, qwen3)
    page.locator("#share-button").click()
    expect(page.locator("#share-button")).to_have_text("Copied")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == page.url


def test_parser_and_grammar_panels_regenerate_with_new_options(page: Page, qwen3: str) -> None:
    paste_and_wait(page, qwen3)
    expect(page.locator("#parser-gbnf")).to_contain_text("::=")
    expect(page.locator("#live-tool-calls .tool-name")).to_have_text("get_weather")
    # tool_choice none: no grammar, and the live parse keeps the sample's call as content.
    page.locator("#id_tool_choice").select_option("none")
    expect(page.locator("#live-tool-calls .tool-call")).to_have_count(0)
    expect(page.locator("#live-content")).to_contain_text('"name": "get_weather"')
    page.locator("#parser-options button[type=submit]").click()
    expect(page.locator("#parser-gbnf")).to_have_text(
        "(no grammar: no tools requested, or tool_choice none)"
    )
    expect(page.locator("#parser-peg")).not_to_be_empty()
    # A response schema: the grammar is for that JSON, applied from the first character.
    page.locator("#id_tool_choice").select_option("auto")
    page.locator("#id_json_schema").fill('{"type": "object", "required": ["mood"]}')
    page.locator("#parser-options button[type=submit]").click()
    expect(page.locator("#parser-gbnf")).to_contain_text('"\\"mood\\""')
    expect(page.locator("#parser-panel .meta")).not_to_contain_text("lazy grammar")


def test_a_call_to_an_unknown_function_is_a_deviation_shown_with_its_caret(
    page: Page, qwen3: str, screenshot: Callable[..., Path]
) -> None:
    paste_and_wait(page, qwen3)
    expect(page.locator("#live-tool-calls .tool-name")).to_have_text("get_weather")
    # Qwen3's call format: JSON inside <tool_call>...</tool_call>. The name carries markup.
    name = "<img src=x onerror=window.__xss=3>"
    box = page.locator("#live-input")
    box.fill('<tool_call>\n{"name": "' + name + '", "arguments": {}}\n</tool_call>')
    deviation = page.locator("#live-deviations .deviation-entry")
    expect(deviation).to_have_count(1, timeout=15_000)
    expect(deviation).to_have_attribute("data-kind", "malformed_call")
    expect(deviation.locator(".deviation-message")).to_contain_text(
        "line 2, column 11 (offset 22): malformed_call: expected `get_weather`"
    )
    expect(deviation.locator(".deviation-message")).to_contain_text("kept as content")
    # The failing line (windowed when long), then a caret under the name's first character.
    context = deviation.locator(".deviation-context")
    expect(context).to_have_text(re.compile(r'^\{"name": "' + re.escape(name)))
    expect(context).to_have_text(re.compile("\n" + " " * 10 + r"\^$"))
    expect(page.locator("#live-tool-calls .tool-call")).to_have_count(0)
    expect(page.locator("#live-content")).to_contain_text(name)
    screenshot("live-parse-problem", "#live")
    assert page.locator("#live img").count() == 0
    assert page.evaluate("window.__xss") is None
    # Fixing the name makes it a call again; the problem goes away.
    box.fill('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>')
    expect(page.locator("#live-tool-calls .tool-name")).to_have_text("get_weather")
    expect(page.locator("#live-deviations")).to_be_hidden()
    expect(page.locator("#live-problem")).to_be_hidden()


# One template per call format; each pre-fills its own rendering of get_weather(Paris, celsius).
FORMATS = [
    pytest.param("NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja", "<tool_call>", id="hermes"),
    pytest.param("Qwen3-Coder.jinja", "<function=get_weather>", id="qwen3-coder"),
    pytest.param("mistralai-Mistral-Nemo-Instruct-2407.jinja", "[TOOL_CALLS]", id="mistral-nemo"),
    pytest.param(
        "meetkai-functionary-medium-v3.1.jinja", "<function=get_weather>", id="functionary"
    ),
    pytest.param("deepseek-ai-DeepSeek-V3.1.jinja", "<｜tool▁call▁begin｜>", id="deepseek-v3.1"),
]


@pytest.mark.parametrize(("filename", "marker"), FORMATS)
def test_each_call_format_prefills_a_sample_that_parses_to_the_example_call(
    page: Page, corpus_templates: Path, filename: str, marker: str
) -> None:
    path = corpus_templates / filename
    if not path.exists():
        pytest.skip(f"{filename} is not in {corpus_templates}")
    paste_and_wait(page, path.read_text())
    expect(page.locator("#live-input")).to_have_value(re.compile(re.escape(marker)))
    expect(page.locator("#live-tool-calls .tool-name")).to_have_text(
        re.compile(r"^get_weather\b"), timeout=15_000
    )
    arguments = page.locator("#live-tool-calls .tool-arguments").inner_text()
    assert json.loads(arguments) == {"city": "Paris", "unit": "celsius"}
    expect(page.locator("#live-problem")).to_be_hidden()
    tools = json.loads(page.locator("#id_tools").input_value())
    assert [tool["function"]["name"] for tool in tools] == ["get_weather"]


def test_an_upload_with_two_named_templates_analyzes_the_picked_one(
    page: Page, corpus_templates: Path, tmp_path: Path, screenshot: Callable[..., Path]
) -> None:
    config = {
        "eos_token": "<|im_end|>",
        "chat_template": [
            {
                "name": "default",
                "template": (corpus_templates / "Qwen-Qwen3-0.6B.jinja").read_text(),
            },
            {
                "name": "tool_use",
                "template": (corpus_templates / "Qwen3-Coder.jinja").read_text(),
            },
        ],
    }
    upload = tmp_path / "tokenizer_config.json"
    upload.write_text(json.dumps(config))
    page.goto("/")
    page.locator("#id_file").set_input_files(upload)
    page.locator("#upload-submit").click()
    expect(page.locator("#upload-pick-intro")).to_contain_text(
        "tokenizer_config.json holds 2 chat templates: pick the ones to analyse."
    )
    expect(page.get_by_label("default")).to_be_checked()
    screenshot("upload-pick", "#upload-form")
    page.get_by_label("default").uncheck()
    page.get_by_label("tool_use").check()
    page.locator("#upload-pick-submit").click()
    expect(page).to_have_url(ANALYSIS_URL)
    expect(page.locator("#analysis-status .badge")).to_have_text("done", timeout=30_000)
    # Qwen3-Coder's tagged calls, not Qwen3's JSON: the picked template was analysed.
    expect(page.locator("#live-input")).to_have_value(re.compile("<function=get_weather>"))
    expect(page.locator("#siblings")).to_contain_text("default")


def test_a_paste_too_large_to_send_is_refused_with_the_size_limit(page: Page) -> None:
    page.goto("/")
    page.locator("#id_source").fill("x" * 4_100_000)  # over Django's 4 MB request body limit
    page.locator("#paste-submit").click()
    expect(page.locator("#paste-form .error")).to_contain_text(
        "The pasted template is too large", timeout=15_000
    )
    expect(page.locator("#paste-form .error")).to_contain_text(
        "the lab accepts at most 1,000,000 bytes (1 MB)."
    )
    expect(page).to_have_url(re.compile(r"/$"))


def test_a_hub_repo_is_fetched_and_analyzed(page: Page, screenshot: Callable[..., Path]) -> None:
    page.goto("/")
    page.locator("#id_repo_id").fill("corpus/Qwen3-Coder")
    page.locator("#hub-submit").click()
    expect(page).to_have_url(ANALYSIS_URL, timeout=15_000)
    expect(page.locator("#analysis-status .badge")).to_have_text("done", timeout=30_000)
    page.locator("h1 + .meta a").first.click()  # the template permalink
    expect(page.locator("body")).to_contain_text("corpus/Qwen3-Coder@")
    screenshot("template-from-hub")


def test_a_hub_error_is_shown_in_the_form_without_leaving_the_page(
    page: Page, screenshot: Callable[..., Path]
) -> None:
    page.goto("/")
    page.locator("#id_repo_id").fill("nobody/nothing")
    page.locator("#hub-submit").click()
    expect(page.locator("#hub-form .errors")).to_contain_text(
        "Repository nobody/nothing was not found"
    )
    expect(page).to_have_url(re.compile(r"/$"))
    screenshot("hub-error")


def test_a_failed_analysis_shows_its_error(page: Page, screenshot: Callable[..., Path]) -> None:
    paste_and_wait(page, "{% for m in messages %}{{ m.content }", status="failed")
    expect(page.locator("#analysis-error")).to_contain_text("syntax error")
    screenshot("analysis-failed")


XSS_TEMPLATE = """{%- for m in messages -%}
{%- if m.role == 'assistant' -%}
<|assistant|>{% if m.reasoning_content %}<script>window.__xss = 1; alert(1)</script>\
{{ m.reasoning_content }}<img src=x onerror="window.__xss = 2">{% endif %}{{ m.content }}<|end|>
{%- else -%}
<|{{ m.role }}|>{{ m.content }}<|end|>
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt %}<|assistant|>{% endif -%}
"""


def test_markup_in_a_template_is_shown_as_text_and_never_runs(
    page: Page, screenshot: Callable[..., Path]
) -> None:
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    paste_and_wait(page, XSS_TEMPLATE)
    expect(page.locator("#cmp-R1")).to_contain_text("<script>window.__xss = 1; alert(1)</script>")
    expect(page.locator("#cmp-R1")).to_contain_text('<img src=x onerror="window.__xss = 2">')
    screenshot("xss-escaped", "#cmp-R1")
    page.goto(page.locator("h1 + .meta a").first.get_attribute("href") or "/")
    expect(page.locator("#template-source")).to_contain_text("<script>window.__xss = 1;")
    page.wait_for_timeout(300)
    assert page.evaluate("window.__xss") is None
    assert dialogs == []
    assert page.locator("img[onerror]").count() == 0
    assert page.locator("script", has_text="__xss").count() == 0
