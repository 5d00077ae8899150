"""What the result page shows, built from an analysis' JSON (hand-written here)."""

from __future__ import annotations

import json
import re
from typing import Any

from lab.analyses import presenters

PREFIX = "<|im_start|>assistant\n"
A_TEXT = PREFIX + "Hello<|im_end|>\n"
B_TEXT = PREFIX + "<think>\nI think\n</think>\nHello<|im_end|>\n"


def _result(**overrides: Any) -> dict[str, Any]:
    """An analysis of a Qwen-style template: R1 adds <think>...</think> before the content."""
    start = B_TEXT.index("<think>")
    end = B_TEXT.index("</think>")
    result: dict[str, Any] = {
        "analyzer_version": "test",
        "template_sha256": "0" * 64,
        "template_name": "default",
        "handler": "auto",
        "caps": {
            "supports_system_role": True,
            "supports_tools": False,
            "template_kwargs": ["enable_thinking"],
        },
        "reasoning": {"mode": "TAG_BASED", "start": "<think>", "end": "</think>"},
        "content": {"mode": "PLAIN", "start": "", "end": "", "requires_nonnull_content": False},
        "tools": {"format": {"mode": "NONE", "section_start": ""}, "call_id": {"pos": "NONE"}},
        "preserved_tokens": ["<think>", "</think>"],
        "markers": [
            {
                "role": "reasoning.start",
                "text": "<think>",
                "comparison": "R1",
                "span_a": None,
                "span_b": {"start": start, "end": start + 7},
            },
            {
                "role": "reasoning.end",
                "text": "</think>",
                "comparison": "R1",
                "span_a": None,
                "span_b": {"start": end, "end": end + 8},
            },
        ],
        "comparisons": [
            {
                "id": "R1",
                "title": "reasoning absent vs present",
                "variant_a": {
                    "label": "no reasoning",
                    "params": '{"messages":[]}',
                    "rendered": A_TEXT,
                },
                "variant_b": {
                    "label": "reasoning",
                    "params": '{"messages":[1]}',
                    "rendered": B_TEXT,
                },
                "diff": {
                    "prefix": PREFIX,
                    "left": "",
                    "right": "<think>\nI think\n</think>\n",
                    "suffix": "Hello<|im_end|>\n",
                },
                "status": "ok",
                "note": "",
            },
        ],
        "generation_prompts": [
            {"enable_thinking": None, "text": "<|im_start|>assistant\n", "label": "model's choice"},
            {
                "enable_thinking": False,
                "text": "<|im_start|>assistant\n<think>\n\n</think>\n\n",
                "label": "closed",
            },
        ],
        "workarounds": [],
    }
    result.update(overrides)
    return result


def _specials() -> re.Pattern[str]:
    return presenters.special_token_pattern(["<think>", "</think>"])


def test_markers_link_to_the_variant_that_contains_them() -> None:
    view = presenters.build_result_view(_result())
    assert [(m.role, m.anchor, m.comparison) for m in view.markers] == [
        ("reasoning.start", "m0b", "R1"),
        ("reasoning.end", "m1b", "R1"),
    ]


def test_pane_outlines_markers_and_puts_their_anchor_first() -> None:
    pair = presenters.build_result_view(_result()).pairs[0]
    assert pair.b is not None
    html = str(pair.b.html)
    anchor = html.index('id="m0b"')
    marker = html.index('class="seg diff marker" title="marker: reasoning.start"')
    assert anchor < marker
    assert '<span class="tok">&lt;think&gt;</span>' in html[marker:]


def test_pane_dims_common_text_and_highlights_the_difference() -> None:
    pair = presenters.build_result_view(_result()).pairs[0]
    assert pair.a is not None and pair.b is not None
    a_html = str(pair.a.html)
    # A's difference is empty, so everything in A is common text.
    assert "seg diff" not in a_html
    assert a_html.count('class="seg common"') == 2
    expected = 'class="seg diff"><span class="ws nl"></span>\nI<span class="ws sp"> </span>think'
    assert expected in str(pair.b.html)


def test_whitespace_and_special_tokens_are_visible() -> None:
    html = presenters.visible_html("<|im_start|>a  b\tc\r\n\u200b", _specials(), show_spaces=True)
    assert '<span class="tok">&lt;|im_start|&gt;</span>' in html
    assert '<span class="ws sp">  </span>' in html
    assert '<span class="ws tab">\t</span>' in html
    assert '<span class="ws cc" title="U+000D">CR</span>' in html
    assert '<span class="ws nl"></span>\n' in html
    assert 'title="U+200B">ZWSP<' in html


def test_template_text_is_escaped_everywhere() -> None:
    evil = '<script>alert(1)</script><img src=x onerror="alert(2)">'
    text = PREFIX + evil
    result = _result(
        markers=[
            {
                "role": "reasoning.start",
                "text": evil,
                "comparison": "R1",
                "span_a": None,
                "span_b": {"start": len(PREFIX), "end": len(text)},
            }
        ],
        comparisons=[
            {
                "id": "R1",
                "title": evil,
                "variant_a": None,
                "variant_b": {"label": evil, "params": json.dumps([evil]), "rendered": text},
                "diff": {"prefix": PREFIX, "left": "", "right": evil, "suffix": ""},
                "status": "ok",
                "note": evil,
            }
        ],
        generation_prompts=[{"enable_thinking": True, "text": evil, "label": "forced-open"}],
        reasoning={"mode": "TAG_BASED", "start": evil, "end": ""},
    )
    view = presenters.build_result_view(result)
    produced = [
        str(view.markers[0].text_html),
        str(view.pairs[0].b.html),  # type: ignore[union-attr]
        str(view.prompts[0].html),
    ] + [str(row.value_html) for row in view.fields]
    for html in produced:
        assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in produced[1]


def test_long_common_prefix_is_folded_keeping_its_end_in_view() -> None:
    system = "You are helpful. " * 100
    text = system + "<think>x"
    html = str(presenters.pane_html(text, len(system), 0, [], "a", _specials()))
    assert '<details class="fold"><summary>' in html
    hidden = len(system) - presenters.KEEP_VISIBLE
    assert f"show {hidden:,} more common characters" in html
    assert html.index("</details>") < html.index("&lt;think&gt;")


def test_summary_lists_modes_set_fields_and_labelled_prompts() -> None:
    view = presenters.build_result_view(_result())
    modes = {mode.name: mode for mode in view.modes}
    assert modes["reasoning"].value == "TAG_BASED"
    assert modes["tools"].value == "NONE"
    assert "start…end block" in modes["reasoning"].meaning
    assert [row.name for row in view.fields] == ["reasoning.start", "reasoning.end"]
    assert view.template_kwargs == ("enable_thinking",)
    assert ("supports_system_role", True) in view.caps
    assert [(p.setting, p.label) for p in view.prompts] == [
        ("enable_thinking unset", "model's choice"),
        ("enable_thinking=false", "closed"),
    ]
    assert view.reasoning_by_setting == (
        "enable_thinking unset: model's choice · enable_thinking=false: closed"
    )
    assert "closed (empty) reasoning block" in view.prompts[1].meaning



def test_a_comparison_the_template_refused_keeps_its_note_and_missing_side() -> None:
    refused = {
        "id": "T2",
        "title": "one call vs two",
        "variant_a": None,
        "variant_b": None,
        "diff": None,
        "status": "unsupported",
        "note": "the template raised: no parallel",
    }
    view = presenters.build_result_view(_result(comparisons=[refused], markers=[]))
    pair = view.pairs[0]
    assert (pair.status, pair.note, pair.a, pair.b) == (
        "unsupported",
        "the template raised: no parallel",
        None,
        None,
    )


def test_a_long_difference_is_folded_too_keeping_head_and_tail() -> None:
    text = "<think>" + "y" * 10_000 + "</think>"
    html = str(presenters.pane_html(text, 0, 0, [], "a", _specials()))
    hidden = len(text) - 2 * presenters.KEEP_VISIBLE
    assert f"show {hidden:,} more differing characters" in html
    assert html.count("y") < 2_000 + 2 * presenters.KEEP_VISIBLE + 100


def test_a_show_more_fold_holds_a_bounded_part_and_says_where_the_rest_is() -> None:
    common = "\n" * 30_000
    html = str(presenters.pane_html(common + "x", len(common), 0, [], "a", _specials()))
    assert html.count('<span class="ws nl">') == presenters.SHOW_MORE_MAX + presenters.KEEP_VISIBLE
    rest = 30_000 - presenters.KEEP_VISIBLE - presenters.SHOW_MORE_MAX
    assert f"… {rest:,} more characters are not shown: the whole render is in the" in html


def test_a_pair_that_renders_the_same_text_twice_is_marked_identical() -> None:
    same = {"label": "x", "params": "{}", "rendered": "<s>hi</s>"}
    comparison = {"id": "C9", "title": "t", "status": "ok", "note": "",
                  "variant_a": same, "variant_b": {**same, "label": "y"}, "diff": None}
    other = {**comparison, "variant_b": {**same, "rendered": "<s>ho</s>"}}
    views = presenters.build_result_view({"comparisons": [comparison, other]}).pairs
    assert [view.identical for view in views] == [True, False]
