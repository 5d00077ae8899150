"""The lab's daily tools in Chromium: render playground, Serve it, compare, downloads."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from playwright.sync_api import Locator, Page, expect

ANALYSIS_URL = re.compile(r"/a/\d+/$")


def paste(page: Page, source: str) -> str:
    page.goto("/")
    page.locator("#id_source").fill(source)
    page.locator("#paste-submit").click()
    expect(page).to_have_url(ANALYSIS_URL)
    expect(page.locator("#analysis-status .badge")).to_have_text("done", timeout=30_000)
    return page.url


def corpus(corpus_templates: Path, name: str) -> str:
    return (corpus_templates / f"{name}.jinja").read_text(encoding="utf-8")


def analysis_id(page: Page) -> int:
    match = re.search(r"/a/(\d+)/", page.url)
    assert match, page.url
    return int(match.group(1))


def test_the_playground_renders_two_sides_with_their_diff_and_a_permalink(
    page: Page, corpus_templates: Path, screenshot: Callable[..., Path]
) -> None:
    paste(page, corpus(corpus_templates, "Qwen-Qwen3-0.6B"))
    page.locator("#section-nav").get_by_role("link", name="Render").click()
    page.locator("#playground-details summary").click()
    # The example starts with thinking on for A and off for B.
    expect(page.locator("#id_a-kwargs")).to_have_value('{"enable_thinking": true}')
    expect(page.locator("#id_b-kwargs")).to_have_value('{"enable_thinking": false}')
    page.locator("#playground-submit").click()
    expect(page).to_have_url(re.compile(r"/a/\d+/render/\?"))
    expect(page.locator("#playground-verdict")).to_contain_text("kwargs.enable_thinking")
    expect(page.locator("#playground-b .seg.diff").first).to_be_visible()
    expect(page.locator("#playground-a .render")).to_contain_text("get_weather")
    screenshot("daily-playground")
    for side in ("#playground-a", "#playground-b"):
        whitespace_and_special_tokens_are_marked(page.locator(f"{side} .render"))

    # The URL is the permalink: opened again, it renders the same prompts.
    permalink = page.url
    rendered = page.locator("#playground-b .render").inner_text()
    page.goto(permalink)
    assert page.locator("#playground-b .render").inner_text() == rendered

    # Same inputs on both sides: no difference.
    page.locator("#id_b-kwargs").fill('{"enable_thinking": true}')
    page.locator("#playground-submit").click()
    expect(page.locator("#playground-verdict")).to_have_text(
        "No difference: both sides render the same prompt."
    )

    # One side alone: its whole prompt shown with the same marks, spaces too.
    page.locator("#playground-compare").uncheck()
    page.locator("#playground-submit").click()
    expect(page.locator("#playground-b")).to_have_count(0)
    whitespace_and_special_tokens_are_marked(page.locator("#playground-a .render"))
    expect(page.locator("#playground-a .render .ws.sp").first).to_be_visible()


def test_the_playground_takes_string_arguments_bos_and_a_continued_message(
    page: Page, corpus_templates: Path
) -> None:
    paste(page, corpus(corpus_templates, "meta-llama-Llama-3.1-8B-Instruct"))
    page.goto(page.url + "render/")
    # Llama 3.1 reads no enable_thinking: the example's B sends the call's arguments as a string.
    page.locator("#playground-submit").click()
    expect(page.locator("#playground-verdict")).to_contain_text("messages")
    difference = page.locator("#playground-b .seg.diff").first
    expect(difference).to_be_visible()
    expect(page.locator("#playground-b .render")).to_contain_text('"{\\"city\\": \\"Paris\\"}"')

    # Side A alone: the given bos_token, and the last message continued, not closed.
    page.locator("#playground-compare").uncheck()
    conversation = [{"role": "user", "content": "Hi"},
                    {"role": "assistant", "content": "The answer is"}]
    page.locator("#id_a-messages").fill(json.dumps(conversation))
    page.locator("#id_a-add_generation_prompt").uncheck()
    page.locator("#id_a-continue_final_message").check()
    page.locator("#id_a-bos_token").fill("<BOS>")
    page.locator("#playground-submit").click()
    render = page.locator("#playground-a .render")
    expect(render).to_be_visible()
    prompt = render.text_content() or ""
    assert prompt.startswith("<BOS>"), prompt[:40]
    assert prompt.endswith("The answer is"), prompt[-40:]
    # The permalink keeps these inputs.
    page.goto(page.url)
    assert page.locator("#playground-a .render").text_content() == prompt


def whitespace_and_special_tokens_are_marked(render: Locator) -> None:
    """Every newline of a prompt carries its visible mark, and special tokens their style."""
    text = render.text_content() or ""
    newlines = render.locator(".ws.nl")
    assert newlines.count() == text.count("\n") > 0
    mark = newlines.first.evaluate("el => getComputedStyle(el, '::before').content")
    assert mark == '"↵"'
    tokens = render.locator(".tok").evaluate_all("els => els.map(el => el.textContent)")
    assert tokens.count("<|im_start|>") == text.count("<|im_start|>") > 0
    expect(render.locator(".tok:visible").first).to_be_visible()  # some sit in folds


def test_serve_it_names_the_engines_parsers_or_what_breaks(
    page: Page, corpus_templates: Path, screenshot: Callable[..., Path]
) -> None:
    paste(page, corpus(corpus_templates, "Qwen3-Coder"))
    card = page.locator("#serve-it")
    expect(card.locator("#serve-cmd-vllm")).to_contain_text("--tool-call-parser qwen3_coder")
    expect(card.locator("#serve-cmd-sglang")).to_contain_text("--tool-call-parser qwen3_coder")
    expect(card.locator("#serve-cmd-llamacpp")).to_contain_text("--jinja")
    screenshot("daily-serve-qwen3-coder", "#serve-it")
    formats = Path(__file__).resolve().parents[2] / "templates_corpus" / "formats"
    paste(page, (formats / "tools_markdown.jinja").read_text(encoding="utf-8"))
    expect(page.locator("#serve-vllm .serve-problem")).to_contain_text("plain text")
    expect(page.locator("#serve-vllm .badge")).to_have_text("no built-in parser fits")


def test_serve_it_maps_hermes_calls_to_the_hermes_parsers_with_a_checked_structural_tag(
    page: Page, corpus_templates: Path
) -> None:
    paste(page, corpus(corpus_templates, "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use"))
    card = page.locator("#serve-it")
    expect(card.locator("#serve-cmd-vllm")).to_contain_text(
        "--enable-auto-tool-choice --tool-call-parser hermes")
    expect(card.locator("#serve-cmd-sglang")).to_contain_text("--tool-call-parser hermes")
    expect(card.locator("#serve-vllm .badge")).to_have_text("fits")
    tag = json.loads(card.locator("#serve-structural-tag").text_content() or "")
    assert tag["triggers"] == ["<tool_call>"]
    assert tag["structures"][0]["begin"].startswith('<tool_call>\n{"name": "get_weather"')
    expect(card.locator("#serve-tag-check strong")).to_have_text("accepted")


def test_two_templates_are_compared_three_ways_with_a_permalink(
    page: Page, corpus_templates: Path, screenshot: Callable[..., Path]
) -> None:
    source = corpus(corpus_templates, "Qwen-Qwen3-0.6B")
    paste(page, source)
    key_a = page.locator(".page-head .meta a code.sha").inner_text()
    paste(page, source.replace("<tool_call>", "<function_call>"))
    key_b = page.locator(".page-head .meta a code.sha").inner_text()
    page.goto("/compare/")
    page.locator("#compare-form summary").click()
    full = {
        code.inner_text()[:12]: code.inner_text()
        for code in page.locator(".recent-templates code.sha").all()
    }
    page.locator("#id_a").fill(full[key_a])
    page.locator("#id_b").fill(full[key_b])
    page.locator("#compare-submit").click()
    expect(page).to_have_url(re.compile(r"/compare/\?a=\w+&b=\w+"))
    expect(page.locator("#compare-source .op-del").first).to_contain_text("<tool_call>")
    expect(page.locator("#compare-source .op-add").first).to_contain_text("<function_call>")
    expect(page.locator("#compare-analysis")).to_contain_text("tools.format.per_call_start")
    changed = page.locator('#compare-behaviour .behaviour-case:not(.same)')
    expect(changed.first.locator(".seg.diff").first).to_be_visible()
    screenshot("daily-compare")
    permalink = page.url
    page.goto(permalink)
    expect(page.locator("#compare-names")).to_be_visible()


def download(page: Page, selector: str) -> tuple[str, str]:
    """Click a download link; answer the saved file's suggested name and its text."""
    with page.expect_download() as saved:
        page.locator(selector).click()
    return saved.value.suggested_filename, Path(saved.value.path()).read_text(encoding="utf-8")


def test_the_grammar_parser_and_reports_download_as_files(
    page: Page, corpus_templates: Path
) -> None:
    paste(page, corpus(corpus_templates, "Qwen3-Coder"))
    pk = analysis_id(page)
    # The grammar and the parser dump are the files of what the parser panel shows.
    name, grammar = download(page, "#download-gbnf")
    assert name == f"analysis-{pk}.gbnf"
    assert grammar.endswith("\n" + str(page.locator("#parser-gbnf").text_content()))
    assert grammar.startswith("# lazy: ")  # how to apply it travels with the file
    assert "root ::=" in grammar
    name, dump = download(page, "#download-parser")
    assert name == f"analysis-{pk}-parser.txt"
    assert dump == page.locator("#parser-peg").text_content()
    name, analysis = download(page, "#download-analysis")
    assert name == f"analysis-{pk}.json"
    assert analysis == page.request.get(f"/api/analyses/{pk}/result.json").text()
    assert json.loads(analysis)["tools"]["format"]["mode"] == "TAG_WITH_TAGGED"
    name, verify = download(page, "#download-verify")
    assert name == f"analysis-{pk}-verify.json"
    report = json.loads(verify)
    assert (report["round_trip"], report["grammar"]) == ("pass", "pass")
    assert "parallel-calls" in [case["case"] for case in report["cases"]]

    # Options changed on the page: the grammar downloaded is the one for those options.
    page.locator("#id_json_schema").fill('{"type": "object", "required": ["mood"]}')
    page.locator("#parser-options button[type=submit]").click()
    expect(page.locator("#parser-gbnf")).to_contain_text("mood")
    _, grammar = download(page, "#download-gbnf")
    assert '\\"mood\\"' in grammar
    assert grammar.endswith("\n" + str(page.locator("#parser-gbnf").text_content()))
    assert grammar.startswith("# lazy: ")  # how to apply it travels with the file


POST_JSON = """async ([url, body]) => {
  const response = await fetch(url, {method: "POST", body: JSON.stringify(body),
                                     headers: {"Content-Type": "application/json"}});
  return {status: response.status, type: response.headers.get("Content-Type"),
          text: await response.text()};
}"""

WEATHER_TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "parameters": {"type": "object", "properties": {
        "city": {"type": "string"}}}}}]
QWEN3_OUTPUT = (
    "<think>\nLook it up.\n</think>\n\nChecking.<tool_call>\n"
    '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
)


def post(page: Page, url: str, body: dict[str, Any]) -> dict[str, Any]:
    """POST JSON with the page's own fetch (as a script on the lab's origin would)."""
    answer: dict[str, Any] = page.evaluate(POST_JSON, [url, body])
    return answer


def server_sent_events(text: str) -> list[tuple[str, dict[str, Any]]]:
    """Read an SSE body into (event, data) pairs."""
    events = []
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((fields["event"], json.loads(fields["data"])))
    return events


def test_the_parse_api_answers_the_message_and_streams_its_deltas(
    page: Page, corpus_templates: Path
) -> None:
    paste(page, corpus(corpus_templates, "Qwen-Qwen3-0.6B"))
    url = f"/api/analyses/{analysis_id(page)}/parse"
    options = {"tools": WEATHER_TOOLS}
    answer = post(page, url, {"output": QWEN3_OUTPUT, "options": options})
    assert answer["status"] == 200 and answer["type"] == "application/json", answer
    report = json.loads(answer["text"])
    message = report["message"]
    # As `template-lab parse` reads it: the newline after `<think>` is layout, not reasoning.
    assert message["reasoning_content"] == "Look it up.\n"
    assert message["content"] == "Checking."
    (call,) = message["tool_calls"]
    assert call["function"]["name"] == "get_weather"
    assert json.loads(call["function"]["arguments"]) == {"city": "Paris"}
    assert report["deviations"] == []

    # stream=true: Server-Sent Events of deltas that add up to the same message, then done.
    answer = post(page, url, {"output": QWEN3_OUTPUT, "options": options, "stream": True,
                              "chunk": 4})
    assert answer["status"] == 200 and answer["type"].startswith("text/event-stream"), answer
    events = server_sent_events(answer["text"])
    kinds = [kind for kind, _ in events]
    assert kinds[-1] == "done" and set(kinds[:-1]) == {"delta"} and len(kinds) > 5, kinds
    deltas = [data["delta"] for kind, data in events if kind == "delta"]
    assert "".join(d.get("reasoning_content", "") for d in deltas) == "Look it up.\n"
    assert "".join(d.get("content", "") for d in deltas) == "Checking."
    arguments = "".join(call.get("function", {}).get("arguments", "")
                        for d in deltas for call in d.get("tool_calls", []))
    assert json.loads(arguments) == {"city": "Paris"}
    assert events[-1][1]["message"] == message

    # A call to a function the request did not offer: a deviation, the call kept as content.
    unknown = QWEN3_OUTPUT.replace("get_weather", "get_time")
    report = json.loads(post(page, url, {"output": unknown, "options": options})["text"])
    assert [d["kind"] for d in report["deviations"]] == ["unknown_function"]
    assert not report["message"].get("tool_calls")
    done = server_sent_events(post(page, url, {"output": unknown, "options": options,
                                               "stream": True})["text"])[-1]
    assert [d["kind"] for d in done[1]["deviations"]] == ["unknown_function"]

    # Errors are JSON too.
    answer = post(page, url, {"options": options})
    assert answer["status"] == 400
    assert json.loads(answer["text"])["error"]["code"] == "bad_request"
    answer = post(page, "/api/analyses/999999/parse", {"output": "Hi"})
    assert answer["status"] == 404
    assert json.loads(answer["text"])["error"]["code"] == "not_found"


def test_two_hub_revisions_of_a_template_are_listed_and_compared(page: Page) -> None:
    page.goto("/compare/")
    page.locator("#id_repo_id").fill("tests/history")
    page.locator("#compare-submit").click()
    commits = page.locator("#template-commits tbody tr")
    expect(commits).to_have_count(2)
    expect(commits.first).to_contain_text("Fix tool calls in the template")
    commits.first.locator("a.compare-previous").click()
    expect(page).to_have_url(re.compile(r"/compare/\?a=\w+&b=\w+$"))
    # GLM-4.6 then GLM-4.7-Flash: the reasoning mode changed.
    expect(page.locator("#compare-analysis")).to_contain_text("FORCED_CLOSED")


SPINNING = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"


def template_key(page: Page) -> str:
    """The analysed template's full key, from its link (/t/<key>/) in the page head."""
    href = page.locator(".page-head .meta a:has(code.sha)").first.get_attribute("href") or ""
    return href.rstrip("/").rsplit("/", 1)[-1]


def test_a_hostile_template_compared_ends_with_its_limit_and_the_page_stays_up(
    page: Page, corpus_templates: Path
) -> None:
    paste(page, corpus(corpus_templates, "Qwen-Qwen3-0.6B"))
    key_a = template_key(page)
    page.goto("/")
    page.locator("#id_source").fill(SPINNING)
    page.locator("#paste-submit").click()
    expect(page.locator("#analysis-status .badge")).to_have_text("failed", timeout=30_000)
    key_b = template_key(page)
    page.goto(f"/compare/?a={key_a}&b={key_b}")
    expect(page.locator("main")).to_contain_text("took longer than", timeout=15_000)
    expect(page.locator("#compare-submit")).to_be_visible()
