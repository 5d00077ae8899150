"""The analysis page's daily fixes in Chromium: glossary, nav, pairs, source, edit, titles, phone.

Each test drives the lab (daphne, a Celery worker, Valkey; see conftest.py) with real
templates from ../shared/corpus.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlparse

from page_layout import page_width  # tests/browser/page_layout.py
from playwright.sync_api import Page, expect

from analyzer.gbnf.builder import LINE_WIDTH

ANALYSIS_URL = re.compile(r"/a/\d+/$")
DIFF_BACKGROUND = "rgb(255, 242, 179)"  # --diff-bg in lab.css


def paste(page: Page, source: str, title: str = "", status: str = "done") -> None:
    page.goto("/")
    if title:
        page.locator("#id_title").fill(title)
    page.locator("#id_source").fill(source)
    page.locator("#paste-submit").click()
    expect(page).to_have_url(ANALYSIS_URL)
    expect(page.locator("#analysis-status .badge")).to_have_text(status, timeout=30_000)


def lay_out_every_panel(page: Page) -> None:
    """Lay out the panels the page renders only near the window (content-visibility: auto).

    A user scrolling reaches each of them laid out; measuring widths or reading innerText of a
    panel not laid out yet would find nothing there, and such a check could not fail.
    """
    page.add_style_tag(content="section.panel { content-visibility: visible !important; }")


def corpus(corpus_templates: Path, name: str) -> str:
    return (corpus_templates / f"{name}.jinja").read_text(encoding="utf-8")


def test_the_summary_explains_each_mode_and_agrees_with_the_prompt_cards(
    page: Page, corpus_templates: Path, screenshot: Callable[..., Path]
) -> None:
    paste(page, corpus(corpus_templates, "GLM-4.7-Flash"))
    reasoning = page.locator('#summary .mode[data-mode="reasoning"] .mode-value')
    expect(reasoning).to_have_text("FORCED_CLOSED")
    expect(reasoning).to_have_attribute("title", re.compile("forced open when thinking is on"))
    # The summary states, per setting, what the prompt cards show.
    by_setting = page.locator("#reasoning-by-setting")
    expect(by_setting).to_contain_text("enable_thinking=true: forced-open")
    expect(by_setting).to_contain_text("enable_thinking=false: closed")
    cards = page.locator("#generation-prompts .prompt .badge")
    expect(cards.nth(1)).to_have_text("forced-open")
    expect(cards.nth(1)).to_have_attribute("title", re.compile("reasoning start marker"))
    page.locator("#glossary summary").click()
    expect(page.locator("#glossary dl")).to_contain_text("TAG_WITH_TAGGED")
    screenshot("fixes-glossary", "#summary")


def test_the_live_box_is_one_click_away_from_anywhere_on_the_page(
    page: Page, corpus_templates: Path
) -> None:
    paste(page, corpus(corpus_templates, "Qwen-Qwen3-0.6B"))
    page.locator("#variant-pairs .pair").last.scroll_into_view_if_needed()
    nav = page.locator("#section-nav")
    expect(nav).to_be_in_viewport()  # sticky: still at the top after scrolling
    nav.get_by_role("link", name="Live parse").click()
    expect(page.locator("#live-input")).to_be_in_viewport()


def test_identical_pairs_say_so_and_special_tokens_keep_the_difference_colour(
    page: Page, corpus_templates: Path, screenshot: Callable[..., Path]
) -> None:
    # (Mistral-Nemo is test_lab_pages' queue test's: it must still be new there.)
    paste(page, corpus(corpus_templates, "meta-llama-Llama-3.1-8B-Instruct"))
    expect(page.locator("#cmp-R1 .no-difference")).to_have_text(
        "No difference: both variants render the same text."
    )
    expect(page.locator("#cmp-T1 .no-difference")).to_have_count(0)
    screenshot("fixes-identical-pair", "#cmp-R1")
    paste(page, corpus(corpus_templates, "Qwen-Qwen3-0.6B"))  # T1's difference holds <tool_call>
    token = page.locator("#cmp-T1 .seg.diff .tok").first
    expect(token).to_be_visible()
    background = token.evaluate("el => getComputedStyle(el).backgroundColor")
    assert background == DIFF_BACKGROUND


def test_the_source_is_highlighted_and_an_error_links_to_its_line(
    page: Page, screenshot: Callable[..., Path]
) -> None:
    source = "{% for m in messages %}{{ m.content }}{% endfor %}\n{{ 1 +* 2 }}\n"
    paste(page, source, status="failed")
    link = page.locator("#analysis-error a.line-link")
    expect(link).to_have_text("line 2")
    link.click()
    expect(page).to_have_url(re.compile(r"#L-2$"))
    line = page.locator("#L-2")
    expect(line).to_be_in_viewport()
    expect(line).to_contain_text("{{ 1 +* 2 }}")
    expect(page.locator("#L-1 .cp").first).to_have_text("{%")  # Jinja highlighted
    number = page.locator("#L-2").evaluate(
        "el => getComputedStyle(el, '::before').content"
    )
    assert number == "counter(line)" or number.strip('"') == "2"
    screenshot("fixes-source-error", "#template-source")


def test_edit_and_reanalyse_starts_from_the_source_and_keeps_the_title(
    page: Page, corpus_templates: Path
) -> None:
    source = corpus(corpus_templates, "Qwen-Qwen3-0.6B")
    paste(page, source)
    first_url = page.url
    page.locator("#edit-template").first.click()
    expect(page.locator("#id_source")).to_have_value(source)
    page.locator("#id_title").fill("Qwen3 without the system prompt")
    page.locator("#id_source").fill(source.replace("<|im_start|>system", "<|im_start|>sys"))
    page.locator("#edit-submit").click()
    expect(page).to_have_url(ANALYSIS_URL)
    assert page.url != first_url
    expect(page.locator("h1")).to_have_text("Qwen3 without the system prompt")
    expect(page.locator("#analysis-status .badge")).to_have_text("done", timeout=30_000)
    page.goto("/")
    expect(page.locator("table.list")).to_contain_text("Qwen3 without the system prompt")


def test_an_untitled_template_is_titled_by_its_family_or_file_name_in_lists(
    page: Page, corpus_templates: Path
) -> None:
    # A source no other test stores: the Hub history repo's GLM-4.6 (test_daily_tools) would
    # otherwise give the paste that repo's title, when it ran first.
    source = "{# untitled paste #}" + corpus(corpus_templates, "GLM-4.6")
    paste(page, source)
    expect(page.locator("h1")).to_have_text("GLM template (pasted)")
    analysis = urlparse(page.url).path
    key = page.locator(".page-head .meta a code.sha").first.inner_text()
    page.goto("/")
    row = page.locator("table.list tr", has=page.locator(f'a[href="{analysis}"]'))
    expect(row.locator("td").first).to_contain_text("GLM template (pasted)")
    page.goto("/compare/")
    stored = page.locator(".recent-templates li", has=page.locator("code.sha", has_text=key))
    expect(stored).to_contain_text("GLM template (pasted)")

    # An uploaded file is titled by its name.
    page.goto("/")
    page.locator("#upload-form input[type=file]").set_input_files(
        files=[{"name": "glm-untitled.jinja", "mimeType": "text/plain",
                "buffer": ("{# untitled upload #}" + source).encode()}]
    )
    page.locator("#upload-submit").click()
    expect(page).to_have_url(ANALYSIS_URL)
    expect(page.locator("h1")).to_have_text("glm-untitled.jinja")


def test_a_file_with_its_own_special_tokens_is_a_new_template(
    page: Page, corpus_templates: Path
) -> None:
    source = "{{ bos_token }}" + corpus(corpus_templates, "Qwen-Qwen2.5-7B-Instruct")
    paste(page, source)
    pasted_url = page.url
    config = {"chat_template": source, "bos_token": "<s>", "eos_token": "<|im_end|>"}
    page.goto("/")
    page.locator("#upload-form input[type=file]").set_input_files(
        files=[{"name": "tokenizer_config.json", "mimeType": "application/json",
                "buffer": json.dumps(config).encode()}]
    )
    page.locator("#upload-submit").click()
    expect(page).to_have_url(ANALYSIS_URL)
    assert page.url != pasted_url
    expect(page.locator("#analysis-status .badge")).to_have_text("done", timeout=30_000)
    # The renders start with the file's bos_token (the paste's rendered it as nothing).
    expect(page.locator("#cmp-C1 .pane pre.render").first).to_contain_text("<s>")
    page.goto(pasted_url)
    expect(page.locator("#cmp-C1 .pane pre.render").first).not_to_contain_text("<s>")


def test_template_kwargs_probed_before_a_fallback_are_listed(
    page: Page, corpus_templates: Path
) -> None:
    paste(page, corpus(corpus_templates, "ByteDance-Seed-OSS"))
    expect(page.locator("#summary")).to_contain_text("thinking_budget")


def test_nothing_scrolls_sideways_at_phone_width_and_the_grammar_wraps(
    page: Page, corpus_templates: Path, screenshot: Callable[..., Path]
) -> None:
    paste(page, corpus(corpus_templates, "Qwen3-Coder"))
    lay_out_every_panel(page)
    grammar = page.locator("#parser-gbnf")
    sizes = grammar.evaluate("el => [el.scrollWidth, el.clientWidth]")
    assert sizes[0] <= sizes[1], sizes
    # The grammar text itself is wrapped (a copied grammar reads well in an editor too).
    longest = max(grammar.inner_text().splitlines(), key=len)
    assert len(longest) <= LINE_WIDTH, longest
    assert '"<tool_call>"' in grammar.inner_text()  # markers read whole
    screenshot("fixes-grammar", "#parser-gbnf")
    page.set_viewport_size({"width": 375, "height": 800})
    page.reload()
    expect(page.locator("#analysis-status .badge")).to_have_text("done")
    width, wide = page_width_at_phone_width(page)
    assert width <= 375, f"the page is {width} px wide at a 375 px viewport: {wide}"
    screenshot("fixes-phone")


def page_width_at_phone_width(page: Page) -> tuple[int, list[str]]:
    """The document's width, and the first elements that stick out past 375 px."""
    lay_out_every_panel(page)
    return page_width(page)


def template_link(page: Page) -> str:
    """The analysed template's permalink (/t/<key>/), from the page head."""
    return page.locator(".page-head .meta a:has(code.sha)").first.get_attribute("href") or ""


def test_the_other_pages_do_not_scroll_sideways_at_phone_width(
    page: Page, corpus_templates: Path, screenshot: Callable[..., Path]
) -> None:
    source = corpus(corpus_templates, "Qwen-Qwen3-0.6B")
    paste(page, source)
    analysis, template_a = urlparse(page.url).path, template_link(page)
    paste(page, source.replace("<tool_call>", "<function_call>"))
    key_a, key_b = (link.rstrip("/").rsplit("/", 1)[-1]
                    for link in (template_a, template_link(page)))
    page.set_viewport_size({"width": 375, "height": 800})
    page.goto(f"{analysis}render/")
    page.locator("#playground-submit").click()  # two sides, with their difference
    expect(page.locator("#playground-b .seg.diff").first).to_be_visible()
    pages = {
        "home": "/",
        "template": template_a,
        "playground": page.url,
        "compare": f"/compare/?a={key_a}&b={key_b}",
    }
    for name, url in pages.items():
        response = page.goto(url)
        assert response is not None and response.ok, (name, url)
        width, wide = page_width_at_phone_width(page)
        assert width <= 375, f"{name}: {width} px wide at a 375 px viewport: {wide}"
    screenshot("fixes-phone-compare")
