"""Turn an analysis' JSON into what the result page shows.

Every piece of template-derived text goes through `django.utils.html.escape` here before it is
wrapped in markup; the page templates only insert the SafeStrings built in this module.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from lab.analyses import glossary

# Common text longer than this is folded, keeping the end near the difference in view.
FOLD_OVER = 700
KEEP_VISIBLE = 240
# A differing part longer than this is folded too (its head and tail stay in view).
DIFF_FOLD_OVER = 4_000
# What a "show more" fold holds at most: the page of a render of 32,768 newlines stays small
# (each shown character can take ~30 bytes of markup); the whole text is in the JSON.
SHOW_MORE_MAX = 2_000

GENERIC_SPECIAL_TOKENS = [
    r"<\|[^<>|\s]{1,60}\|>",  # <|im_start|>
    r"<｜[^<>｜]{1,60}｜>",  # DeepSeek's full-width bars
    r"\[/?[A-Z][A-Z_]{1,30}\]",  # [INST], [TOOL_CALLS]
]

INVISIBLE_NAMES = {
    "\r": "CR",
    "\u00a0": "NBSP",
    "\u200b": "ZWSP",
    "\u200c": "ZWNJ",
    "\u200d": "ZWJ",
    "\ufeff": "BOM",
}

THINKING_SETTINGS = {
    None: "enable_thinking unset",
    True: "enable_thinking=true",
    False: "enable_thinking=false",
}


@dataclass(frozen=True)
class MarkerView:
    index: int
    role: str
    text_html: SafeString
    comparison: str
    anchor: str  # element id of the marker in its variant pair


@dataclass(frozen=True)
class ModeView:
    name: str
    value: str
    meaning: str  # one sentence from the glossary, shown as its tooltip


@dataclass(frozen=True)
class PaneView:
    label: str
    params: str
    html: SafeString


@dataclass(frozen=True)
class PairView:
    id: str
    title: str
    status: str
    note: str
    a: PaneView | None
    b: PaneView | None
    marker_roles: tuple[str, ...]
    identical: bool = False  # both variants rendered the same text


@dataclass(frozen=True)
class PromptView:
    setting: str
    label: str
    html: SafeString
    meaning: str = ""


@dataclass(frozen=True)
class FieldRow:
    name: str
    value_html: SafeString


@dataclass(frozen=True)
class ResultView:
    handler: str
    workarounds: tuple[str, ...]
    caps: tuple[tuple[str, bool], ...]
    template_kwargs: tuple[str, ...]
    modes: tuple[ModeView, ...]
    fields: tuple[FieldRow, ...]
    markers: tuple[MarkerView, ...]
    prompts: tuple[PromptView, ...]
    preserved_tokens: tuple[str, ...] = field(default=())
    # The pairs are most of the view's cost and are shown below the summary: built when first
    # read, after the page's part down to the summary has been sent (views._page_parts).
    comparisons: tuple[dict[str, Any], ...] = field(default=(), repr=False)
    raw_markers: tuple[dict[str, Any], ...] = field(default=(), repr=False)

    @property
    def pair_count(self) -> int:
        return len(self.comparisons)

    @cached_property
    def pairs(self) -> tuple[PairView, ...]:
        specials = special_token_pattern(list(self.preserved_tokens))
        markers = list(self.raw_markers)
        return tuple(_pair_view(c, markers, specials) for c in self.comparisons)

    @property
    def reasoning_by_setting(self) -> str:
        """What the prompt does per enable_thinking setting, as the prompt cards say."""
        return " · ".join(f"{p.setting}: {p.label}" for p in self.prompts)


def special_token_pattern(preserved: list[str]) -> re.Pattern[str]:
    """Match the analysis' preserved tokens and the usual special-token shapes."""
    literal = [re.escape(token) for token in sorted(set(preserved), key=len, reverse=True) if token]
    return re.compile("|".join(literal + GENERIC_SPECIAL_TOKENS))


def visible_html(text: str, specials: re.Pattern[str], *, show_spaces: bool = False) -> str:
    """Escape text, mark special tokens, and make whitespace and invisible characters visible."""
    out: list[str] = []
    position = 0
    for match in specials.finditer(text):
        out.append(_whitespace_html(text[position : match.start()], show_spaces))
        out.append(f'<span class="tok">{escape(match.group())}</span>')
        position = match.end()
    out.append(_whitespace_html(text[position:], show_spaces))
    return "".join(out)


_WHITESPACE = re.compile("(\n|\t| +|[\r\u00a0\u200b\u200c\u200d\ufeff])")


def _whitespace_html(text: str, show_spaces: bool) -> str:
    out: list[str] = []
    for piece in _WHITESPACE.split(text):
        if not piece:
            continue
        if piece == "\n":
            out.append('<span class="ws nl"></span>\n')
        elif piece == "\t":
            out.append('<span class="ws tab">\t</span>')
        elif piece.startswith(" "):
            out.append(f'<span class="ws sp">{piece}</span>' if show_spaces else piece)
        elif piece in INVISIBLE_NAMES:
            out.append(
                f'<span class="ws cc" title="U+{ord(piece):04X}">{INVISIBLE_NAMES[piece]}</span>'
            )
        else:
            out.append(str(escape(piece)))
    return "".join(out)


@dataclass(frozen=True)
class _Mark:
    index: int
    role: str
    start: int
    end: int


def pane_html(
    text: str,
    prefix_len: int,
    suffix_len: int,
    marks: list[_Mark],
    side: str,
    specials: re.Pattern[str],
) -> SafeString:
    """Render one variant: common parts dimmed, the difference highlighted, markers outlined."""
    diff_start, diff_end = prefix_len, len(text) - suffix_len
    cuts = {0, len(text), diff_start, diff_end}
    for mark in marks:
        cuts.update((mark.start, mark.end))
    points = sorted(cut for cut in cuts if 0 <= cut <= len(text))
    out: list[str] = []
    for start, end in zip(points, points[1:], strict=False):
        out.extend(_anchor(mark, side) for mark in marks if mark.start == start)
        covering = [mark for mark in marks if mark.start <= start and end <= mark.end]
        in_diff = diff_start <= start and end <= diff_end and diff_start < diff_end
        out.append(
            _segment_html(
                text[start:end],
                in_diff,
                covering,
                specials,
                at_start=start == 0,
                at_end=end == len(text),
            )
        )
    out.extend(_anchor(mark, side) for mark in marks if mark.start == len(text))
    return mark_safe("".join(out))  # noqa: S308 - every text piece was escaped above


def _anchor(mark: _Mark, side: str) -> str:
    return f'<span class="anchor" id="m{mark.index}{side}"></span>'


def _segment_html(
    text: str,
    in_diff: bool,
    covering: list[_Mark],
    specials: re.Pattern[str],
    *,
    at_start: bool,
    at_end: bool,
) -> str:
    classes = ["seg", "diff" if in_diff else "common"]
    title = ""
    if covering:
        classes.append("marker")
        roles = ", ".join(mark.role for mark in covering)
        title = f' title="marker: {escape(roles)}"'
    if not (in_diff or covering):
        body = _folded(text, specials, at_start, at_end)
    elif len(text) > DIFF_FOLD_OVER:
        body = _folded(text, specials, False, False, "differing")
    else:
        body = visible_html(text, specials, show_spaces=True)
    return f'<span class="{" ".join(classes)}"{title}>{body}</span>'


def _folded(
    text: str, specials: re.Pattern[str], at_start: bool, at_end: bool, what: str = "common"
) -> str:
    if len(text) <= FOLD_OVER:
        return visible_html(text, specials)
    if at_start:  # common prefix: what matters is its end, next to the difference
        head, hidden, tail = "", text[:-KEEP_VISIBLE], text[-KEEP_VISIBLE:]
    elif at_end:
        head, hidden, tail = text[:KEEP_VISIBLE], text[KEEP_VISIBLE:], ""
    else:
        head, hidden, tail = (
            text[:KEEP_VISIBLE],
            text[KEEP_VISIBLE:-KEEP_VISIBLE],
            text[-KEEP_VISIBLE:],
        )
    folded = (
        f'<details class="fold"><summary>show {len(hidden):,} more {what} characters'
        f"</summary>{_show_more(hidden, specials)}</details>"
    )
    return visible_html(head, specials) + folded + visible_html(tail, specials)


def _show_more(hidden: str, specials: re.Pattern[str]) -> str:
    """Show a fold's text up to SHOW_MORE_MAX characters, and say where the rest is."""
    if len(hidden) <= SHOW_MORE_MAX:
        return visible_html(hidden, specials)
    rest = len(hidden) - SHOW_MORE_MAX
    return visible_html(hidden[:SHOW_MORE_MAX], specials) + (
        f'<span class="cut">… {rest:,} more characters are not shown: the whole render is in'
        " the analysis JSON</span>"
    )


def build_result_view(result: dict[str, Any]) -> ResultView:
    """Collect everything the result page shows from an analysis' JSON."""
    specials = special_token_pattern(list(result.get("preserved_tokens") or []))
    markers = list(result.get("markers") or [])
    caps = dict(result.get("caps") or {})
    kwargs = tuple(caps.pop("template_kwargs", None) or ())
    return ResultView(
        handler=str(result.get("handler", "")),
        workarounds=tuple(result.get("workarounds") or ()),
        caps=tuple((name, bool(value)) for name, value in caps.items()),
        template_kwargs=kwargs,
        modes=_modes(result),
        fields=tuple(_field_rows(result, specials)),
        markers=tuple(_marker_views(markers, specials)),
        comparisons=tuple(result.get("comparisons") or ()),
        raw_markers=tuple(markers),
        prompts=tuple(_prompt_view(p, specials) for p in result.get("generation_prompts") or []),
        preserved_tokens=tuple(result.get("preserved_tokens") or ()),
    )


def _modes(result: dict[str, Any]) -> tuple[ModeView, ...]:
    tools = result.get("tools") or {}
    values = (
        ("reasoning", str((result.get("reasoning") or {}).get("mode", ""))),
        ("content", str((result.get("content") or {}).get("mode", ""))),
        ("tools", str((tools.get("format") or {}).get("mode", ""))),
        ("call id", str((tools.get("call_id") or {}).get("pos", ""))),
    )
    return tuple(ModeView(name, value, glossary.meaning(name, value)) for name, value in values)


def _field_rows(result: dict[str, Any], specials: re.Pattern[str]) -> list[FieldRow]:
    """Flatten the reasoning/content/tools sections into their set (non-default) fields."""
    rows: list[FieldRow] = []
    for section in ("reasoning", "content", "tools"):
        for name, value in _flatten(section, result.get(section) or {}):
            if value in ("", False, None, "NONE") or name.endswith((".mode", ".pos")):
                continue
            html = (
                visible_html(value, specials, show_spaces=True)
                if isinstance(value, str)
                else str(escape(json.dumps(value)))
            )
            rows.append(FieldRow(name, mark_safe(html)))  # noqa: S308 - escaped above
    return rows


def _flatten(prefix: str, value: Any) -> list[tuple[str, Any]]:
    if not isinstance(value, dict):
        return [(prefix, value)]
    rows: list[tuple[str, Any]] = []
    for key, inner in value.items():
        rows.extend(_flatten(f"{prefix}.{key}", inner))
    return rows


def _marker_views(markers: list[dict[str, Any]], specials: re.Pattern[str]) -> list[MarkerView]:
    views = []
    for index, marker in enumerate(markers):
        side = "a" if marker.get("span_a") else "b"
        html = mark_safe(visible_html(str(marker.get("text", "")), specials, show_spaces=True))  # noqa: S308
        views.append(
            MarkerView(
                index,
                str(marker.get("role", "")),
                html,
                str(marker.get("comparison", "")),
                f"m{index}{side}",
            )
        )
    return views


def _pair_view(
    comparison: dict[str, Any], markers: list[dict[str, Any]], specials: re.Pattern[str]
) -> PairView:
    cid = str(comparison.get("id", ""))
    own = [(i, m) for i, m in enumerate(markers) if m.get("comparison") == cid]
    diff = comparison.get("diff") or {}
    return PairView(
        id=cid,
        title=str(comparison.get("title", "")),
        status=str(comparison.get("status", "")),
        note=str(comparison.get("note", "")),
        a=_pane(comparison.get("variant_a"), diff, own, "a", specials),
        b=_pane(comparison.get("variant_b"), diff, own, "b", specials),
        marker_roles=tuple(str(m.get("role", "")) for _, m in own),
        identical=_rendered(comparison, "a") is not None
        and _rendered(comparison, "a") == _rendered(comparison, "b"),
    )


def _rendered(comparison: dict[str, Any], side: str) -> str | None:
    variant = comparison.get(f"variant_{side}")
    return str(variant.get("rendered", "")) if variant else None


def _pane(
    variant: dict[str, Any] | None,
    diff: dict[str, Any],
    own: list[tuple[int, dict[str, Any]]],
    side: str,
    specials: re.Pattern[str],
) -> PaneView | None:
    if not variant:
        return None
    text = str(variant.get("rendered", ""))
    prefix, suffix = len(diff.get("prefix") or ""), len(diff.get("suffix") or "")
    if prefix + suffix > len(text):  # diff does not belong to this text: highlight nothing
        prefix, suffix = len(text), 0
    marks = [
        _Mark(i, str(m.get("role", "")), span["start"], span["end"])
        for i, m in own
        if (span := m.get(f"span_{side}"))
    ]
    return PaneView(
        label=str(variant.get("label", "")),
        params=_pretty_json(str(variant.get("params", ""))),
        html=pane_html(text, prefix, suffix, marks, side, specials),
    )


def _pretty_json(text: str) -> str:
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return text


def _prompt_view(prompt: dict[str, Any], specials: re.Pattern[str]) -> PromptView:
    thinking = prompt.get("enable_thinking")
    setting = THINKING_SETTINGS.get(thinking, f"enable_thinking={thinking}")
    html = mark_safe(visible_html(str(prompt.get("text", "")), specials, show_spaces=True))  # noqa: S308
    label = str(prompt.get("label", ""))
    return PromptView(setting, label, html, glossary.meaning("prompt", label))
