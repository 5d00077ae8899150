"""The lab's daily tools in Chromium: render playground, Serve it, compare, downloads."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Page, expect

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


def test_the_grammar_and_reports_download_as_files(page: Page, corpus_templates: Path) -> None:
    paste(page, corpus(corpus_templates, "Qwen3-Coder"))
    files = {
        "#download-gbnf": (".gbnf", "root ::="),
        "#download-analysis": (".json", '"analyzer_version"'),
    }
    for selector, (suffix, needle) in files.items():
        with page.expect_download() as download:
            page.locator(selector).click()
        assert download.value.suggested_filename.endswith(suffix)
        assert needle in Path(download.value.path()).read_text(encoding="utf-8")


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
