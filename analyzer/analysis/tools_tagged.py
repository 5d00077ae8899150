"""Argument comparisons A1-A3 and T5 for tag-based arguments (`<param=k>v</param>`, `k='v'`)."""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.analysis import tools_inputs as inputs
from analyzer.analysis.context import AnalysisContext
from analyzer.analysis.diff import (
    common_prefix_fixed,
    common_suffix_fixed,
    marker_run_after,
    skip_space,
)
from analyzer.analysis.tools_draft import ToolDraft
from analyzer.analysis.variants import ARG_A, ARG_B, FUNC_A, VAL_A, VAL_B
from analyzer.model import Comparison, TypedPrefix
from analyzer.piece import Piece

TITLES = {
    "A1": "A1 argument name: one name vs another",
    "A2": "A2 argument value: one string vs another",
    "A3": "A3 argument type: a string vs a boolean",
    "T5": "T5 argument count: one argument vs two",
}


@dataclass(frozen=True)
class ArgsSpan:
    """Where the arguments sit in the one-call render: [start, end)."""

    start: int
    end: int


@dataclass(frozen=True)
class OneArg:
    """Positions in a render of a call with one argument."""

    text: str
    name_end: int  # end of the function name
    arg: int  # where the argument name is written
    value: int  # where the value is written
    value_len: int
    high: int  # end of the tool section


def _locate(comparison: Comparison, side: str, value: str, trailer: str) -> OneArg | None:
    variant = comparison.variant_a if side == "a" else comparison.variant_b
    if variant is None or not variant.rendered:
        return None
    text = variant.rendered
    name = _last_call_name(text, len(text) - len(trailer))
    arg = text.find(ARG_A, name)
    at = text.find(value, arg + len(ARG_A))
    if min(name, arg, at) < 0:
        return None
    high = len(text) - len(trailer) if text.endswith(trailer) else len(text)
    return OneArg(text, name + len(FUNC_A), arg, at, len(value), high)


def _last_call_name(text: str, high: int) -> int:
    """The call's function name is its last mention before the section ends."""
    return text.rfind(FUNC_A, 0, high)


def analyze_tagged_args(
    ctx: AnalysisContext, draft: ToolDraft, text: str, name_pos: int, high: int
) -> ArgsSpan | None:
    """Run A1, A2, A3 and T5; fill the argument markers; return where the arguments sit."""
    f = ctx.calls
    trailer = text[high:]
    a1 = ctx.compare("A1", TITLES["A1"], inputs.one_arg(f), inputs.other_arg_name(f))
    a2 = ctx.compare("A2", TITLES["A2"], inputs.one_arg(f), inputs.other_arg_value(f))
    a3 = ctx.compare("A3", TITLES["A3"], inputs.one_arg(f), inputs.typed_arg(f))
    t5 = ctx.compare("T5", TITLES["T5"], inputs.one_arg(f), inputs.one_call(f))
    one = _locate(a1, "a", VAL_A, trailer)
    if one is None or t5.variant_b is None or a2.status != "ok":
        return None
    two = _two_args(text, name_pos)
    if two is None:
        return None
    name_prefix, value_suffix, separator = _between_args(one, text, two)
    draft.arg_name_prefix = ctx.mark_b("tools.arguments.name_prefix", name_prefix.text, "T5",
                                       name_prefix.pos)
    suffix, echo = _split_echo(value_suffix)
    draft.value_suffix = ctx.mark_b("tools.arguments.value_suffix", suffix.text, "T5", suffix.pos)
    if echo is not None:
        draft.suffix_echoes_name = True
        draft.echo_suffix = ctx.mark_b("tools.arguments.echo_suffix", echo.text, "T5", echo.pos)
    draft.arg_separator = ctx.mark_b("tools.arguments.separator", separator.text, "T5",
                                     separator.pos)
    _name_and_value_prefix(ctx, draft, one, a3, trailer)
    draft.value_padding = _padding_around(one)
    last_suffix = value_suffix.text.replace(ARG_A, ARG_B) if echo is not None else value_suffix.text
    end = _after_value_suffix(text, two[3] + len(VAL_B), last_suffix)
    return ArgsSpan(two[0] - len(name_prefix.text), end)


def _padding_around(one: OneArg) -> tuple[str, str]:
    """The whitespace right before and right after the string value in a one-argument call."""
    before = one.text[one.arg + len(ARG_A) : one.value]
    after = one.text[one.value + one.value_len : one.high]
    return before[len(before.rstrip()) :], after[: len(after) - len(after.lstrip())]


def _split_echo(value_suffix: Piece) -> tuple[Piece, Piece | None]:
    """Split a value suffix that repeats the argument's name (`</city>` closes `<city>`)."""
    at = value_suffix.text.find(ARG_A)
    if at < 0:
        return value_suffix, None
    return value_suffix.head(at), value_suffix.drop_head(at + len(ARG_A))


def _two_args(text: str, name_pos: int) -> tuple[int, int, int, int] | None:
    """Positions of first name, first value, second name, second value after name_pos."""
    arg_a = text.find(ARG_A, name_pos)
    val_a = text.find(VAL_A, arg_a + len(ARG_A))
    arg_b = text.find(ARG_B, val_a + len(VAL_A))
    val_b = text.find(VAL_B, arg_b + len(ARG_B))
    if min(arg_a, val_a, arg_b, val_b) < 0:
        return None
    return arg_a, val_a, arg_b, val_b


def _between_args(one: OneArg, text: str, two: tuple[int, int, int, int]) -> tuple[Piece, ...]:
    """Split the text between two arguments into value suffix, separator and name prefix."""
    between = Piece.cut(text, two[1] + len(VAL_A), two[2])
    before_first = one.text[one.name_end : one.arg]
    after_last = one.text[one.value + one.value_len : one.high]
    prefix_len = common_suffix_fixed(between.text, before_first)
    suffix_len = common_prefix_fixed(between.text, after_last)
    if prefix_len + suffix_len > len(between.text):
        prefix_len = len(between.text) - suffix_len
    name_prefix = between.tail(prefix_len).strip()
    value_suffix = between.head(suffix_len).strip()
    separator = Piece.cut(text, value_suffix.end, name_prefix.pos)
    if not value_suffix.text:
        separator = Piece.cut(text, between.pos, name_prefix.pos)
    if not name_prefix.text:
        name_prefix = Piece("", between.end)
        separator = Piece.cut(text, value_suffix.end if value_suffix.text else between.pos,
                              between.end)
    return name_prefix, value_suffix, separator


def _name_and_value_prefix(
    ctx: AnalysisContext, draft: ToolDraft, one: OneArg, a3: Comparison, trailer: str
) -> None:
    """Split name-to-value text into name suffix and (string / typed) value prefixes."""
    between = Piece.cut(one.text, one.arg + len(ARG_A), one.value)
    typed = _typed_literal(a3, trailer)
    if typed is None:
        typed_between = between
        text_t, lit_t, literal = "", -1, "true"
    else:
        text_t, arg_t, lit_t, literal = typed
        typed_between = Piece.cut(text_t, arg_t + len(ARG_A), lit_t)
    shared = common_prefix_fixed(between.text, typed_between.text)
    if shared == len(between.text) == len(typed_between.text):
        shared = _first_group_end(between.text)
    name_suffix = between.head(shared).strip()
    draft.arg_name_suffix = ctx.mark_a("tools.arguments.name_suffix", name_suffix.text, "A1",
                                       name_suffix.pos)
    prefix = between.drop_head(shared).strip()
    draft.value_prefix = ctx.mark_a("tools.arguments.value_prefix", prefix.text, "A2", prefix.pos)
    typed_prefix = typed_between.drop_head(shared).strip()
    if typed is None:
        draft.typed_value_prefix = prefix.text
        draft.typed_value_suffix = draft.value_suffix
        return
    draft.typed_value_prefix = ctx.mark_b("tools.arguments.typed_value_prefix", typed_prefix.text,
                                          "A3", typed_prefix.pos)
    draft.literal_style = "python" if literal == "True" else "json"
    _typed_suffix(ctx, draft, one, text_t, lit_t + len(literal), trailer)
    _per_type_prefixes(ctx, draft, shared, trailer)


# Where each JSON type's literal starts, as the probe values render (JSON or Python style).
_LITERAL_STARTS = {"number": ("7",), "object": ('{"k"', "{'k'"), "array": ("[1]",),
                   "null": ("null", "None")}
_TYPE_IDS = {"number": "A3n", "object": "A3o", "array": "A3a"}
# A null is probed last and may be missing: templates often leave a null argument out.
_NULL_ID = "A3z"


def _per_type_prefixes(ctx: AnalysisContext, draft: ToolDraft, shared: int, trailer: str) -> None:
    """A3n/A3o/A3a/A3z: record a value prefix per JSON type when the types' prefixes differ."""
    found = [TypedPrefix("boolean", draft.typed_value_prefix)]
    spots: list[tuple[str, str, int]] = []
    for json_type, cid in (*_TYPE_IDS.items(), ("null", _NULL_ID)):
        comparison = ctx.compare(cid, f"{cid} argument type: a string vs a {json_type}",
                                 inputs.one_arg(ctx.calls), inputs.typed_arg_of(ctx.calls,
                                                                                json_type))
        spot = _literal_prefix(comparison, json_type, shared, trailer, draft.typed_value_suffix)
        if spot is None and json_type == "null":
            break
        if spot is None:
            return
        found.append(TypedPrefix(json_type, spot.text))
        spots.append((cid, spot.text, spot.pos))
    if len({entry.prefix for entry in found}) > 1:
        draft.typed_prefixes = found
        for cid, text, pos in spots:
            ctx.mark_b("tools.arguments.typed_prefixes", text, cid, pos)


def _literal_prefix(
    comparison: Comparison, json_type: str, shared: int, trailer: str, typed_suffix: str
) -> Piece | None:
    """The text between the name suffix and a literal of this type, in variant B."""
    if comparison.variant_b is None or not comparison.variant_b.rendered:
        return None
    text = comparison.variant_b.rendered
    arg = text.find(ARG_A, max(text.rfind(FUNC_A, 0, len(text) - len(trailer)), 0))
    if arg < 0:
        return None
    if json_type == "null":
        start = _null_literal(text, arg + len(ARG_A), typed_suffix)
    else:
        starts = [text.find(lit, arg + len(ARG_A)) for lit in _LITERAL_STARTS[json_type]]
        start = min((at for at in starts if at >= 0), default=None)
    if start is None:
        return None
    return Piece.cut(text, arg + len(ARG_A) + shared, start).strip()


def _null_literal(text: str, after: int, typed_suffix: str) -> int | None:
    """Where the null value starts: the first `null`/`None` the typed suffix follows."""
    # The word may come earlier as a type name (Kimi-K3 writes `type="null"` before null).
    hits = sorted(at for word in _LITERAL_STARTS["null"]
                  for at in _occurrences(text, word, after))
    for at in hits:
        rest = text[at + 4 :].lstrip()
        if not typed_suffix or rest.startswith(typed_suffix):
            return at
    return None


def _occurrences(text: str, word: str, start: int) -> list[int]:
    """Every position of word in text from start on."""
    found, at = [], text.find(word, start)
    while at >= 0:
        found.append(at)
        at = text.find(word, at + 1)
    return found


def _first_group_end(text: str) -> int:
    """Where the name's closing marker group ends, when a second group opens the value."""
    first = marker_run_after(text, skip_space(text, 0), with_word=False)
    if first is None:
        return len(text)
    second = marker_run_after(text, skip_space(text, first[1]), with_word=False)
    return first[1] if second is not None and second[1] == len(text.rstrip()) else len(text)


def _typed_literal(a3: Comparison, trailer: str) -> tuple[str, int, int, str] | None:
    """Find the boolean literal in A3's typed render: (text, arg pos, literal pos, literal)."""
    if a3.variant_b is None or not a3.variant_b.rendered:
        return None
    text = a3.variant_b.rendered
    name = text.rfind(FUNC_A, 0, len(text) - len(trailer))
    arg = text.find(ARG_A, max(name, 0))
    if name < 0 or arg < 0:
        return None
    hits = [(text.find(lit, arg + len(ARG_A)), lit) for lit in ("true", "True")]
    hits = [hit for hit in hits if hit[0] >= 0]
    if not hits:
        return None
    at, literal = min(hits)
    return text, arg, at, literal


def _typed_suffix(
    ctx: AnalysisContext, draft: ToolDraft, one: OneArg, text_t: str, after_lit: int, trailer: str
) -> None:
    """A typed value's suffix: the string suffix minus what only strings get (e.g. a quote)."""
    after_one = one.text[one.value + one.value_len : one.high]
    high_t = len(text_t) - len(trailer) if text_t.endswith(trailer) else len(text_t)
    after_typed = text_t[after_lit:high_t]
    shared = common_suffix_fixed(after_one, after_typed)
    only_string = after_one[: len(after_one) - shared]
    only_typed = after_typed[: len(after_typed) - shared]
    suffix = draft.value_suffix
    typed = only_typed + suffix[len(only_string.strip()) :] if suffix.startswith(
        only_string.strip()) else suffix
    typed = typed.strip()
    if draft.suffix_echoes_name and ARG_A in typed:
        typed = typed[: typed.find(ARG_A)]
    at = text_t.find(typed, after_lit) if typed else -1
    if typed and at >= 0 and text_t[after_lit:at].strip() == "":
        draft.typed_value_suffix = ctx.mark_b("tools.arguments.typed_value_suffix", typed, "A3", at)
    else:
        draft.typed_value_suffix = typed


def _after_value_suffix(text: str, pos: int, value_suffix: str) -> int:
    """Return the position after the value suffix that follows pos (across whitespace)."""
    if not value_suffix:
        return pos
    at = skip_space(text, pos)
    return at + len(value_suffix) if text.startswith(value_suffix, at) else pos
