"""Lay tool calls out as the template does: section markers, per-call markers, separators.

Each tool builder provides one call (already wrapped in `tool(...)`) and its head, the part
that settles that a call has begun (up to the function name). This module wraps them in the
template's section and per-call markers and says which markers may open the calls.

Closing markers are optional: a model often stops right where the end-of-turn token replaces
them, and a call that is otherwise complete should not be lost for it.
"""

from __future__ import annotations

from dataclasses import dataclass

from analyzer import peg as p
from analyzer.analysis.diff import is_marker
from analyzer.generator.build import Build, closing, led_loop, lit, or_else


@dataclass(frozen=True)
class CallGrammar:
    """The tool-call part of a grammar."""

    triggers: tuple[str, ...]  # markers that may open the tool calls
    head: p.Expr  # a trigger followed by a settled call opening (for lookahead)
    section: p.Expr  # every tool call of the output


@dataclass(frozen=True)
class JsonBody:
    """JSON call objects a model may write in the template's wrapper instead of its calls
    (json_body.py), and their head."""

    body: p.Expr
    head: p.Expr


@dataclass(frozen=True)
class Call:
    """One call of any of the request's functions, and its head (without captures)."""

    call: p.Expr
    head: p.Expr
    # JSON call objects a model may write in the wrapper instead (and their head).
    json: JsonBody | None = None


def marker_like(text: str) -> bool:
    """Tell whether text starts with a whole `<...>`/`[...]` marker (safe to trigger on)."""
    core = text.strip()
    return bool(core) and (is_marker(core) or core[0] in "<[" and len(core) > 2)


def layout(b: Build, call: Call) -> CallGrammar:
    """Wrap calls in the template's per-call and section markers."""
    fmt = b.analysis.tools.format
    per_call_start, name_prefix = fmt.per_call_start.strip(), b.analysis.tools.function.name_prefix
    loose_start = bool(per_call_start) and marker_like(name_prefix)
    opener = lit(per_call_start) + p.space()
    if loose_start:
        opener = p.optional(opener)
    one, one_head = call.call, call.head
    if call.json is not None:  # a JSON body in the wrapper: tried once the call is not there
        one, one_head = or_else(one, call.json.body), p.choice(one_head, call.json.head)
    unit = opener + one + closing(fmt.per_call_end)
    calls = unit + led_loop(p.zero_or_more(separator(fmt.call_separator) + unit))
    head = opener + one_head
    section_start = fmt.section_start.strip()
    if section_start:
        section_open = lit(section_start) + p.space()
        if per_call_start:
            section_open = p.optional(section_open)
            if call.json is not None:  # a JSON body right in the section
                calls, head = p.choice(calls, call.json.body), p.choice(head, call.json.head)
        calls = section_open + calls + closing(fmt.section_end)
        head = section_open + head
    triggers = [section_start, per_call_start]
    if (loose_start or not per_call_start and not section_start) and marker_like(name_prefix):
        triggers.append(name_prefix.strip())
    return CallGrammar(tuple(t for t in dict.fromkeys(triggers) if t), head, calls)


def separator(text: str) -> p.Expr:
    """Match what the template writes between two calls (its marker optional)."""
    core = text.strip()
    return p.space() + p.optional(p.literal(core)) + p.space() if core else p.space()
