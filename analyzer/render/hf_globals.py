"""The globals and filters transformers gives chat templates, reproduced (and bounded)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import datetime
from functools import partial
from typing import Any

import jinja2.ext
from jinja2 import nodes
from jinja2.exceptions import SecurityError
from jinja2.parser import Parser
from jinja2.utils import Namespace, generate_lorem_ipsum

from analyzer.render.limits import (
    LimitExceeded,
    RenderLimits,
    check_count,
    check_text_size,
    checked_range,
    current_budget,
    text_size,
    too_large,
)

MAX_JSON_INDENT = 1_000


class TemplateRaise(Exception):
    """Internal signal that the template called raise_exception(message)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class GenerationExtension(jinja2.ext.Extension):
    """Accept transformers' `{% generation %}...{% endgeneration %}` and render its body."""

    tags = {"generation"}

    def parse(self, parser: Parser) -> nodes.Node:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        call = self.call_method("_render_body")
        return nodes.CallBlock(call, [], [], body).set_lineno(lineno)

    def _render_body(self, caller: Callable[[], str]) -> str:
        # Like transformers with its assistant-mask tracker inactive: the body, unchanged.
        return caller()


class IteratorNotSerializable(TypeError):
    """json's refusal of an iterator (a `map(...)` result), which llama.cpp writes as a list."""


def refuse_unserializable(value: Any) -> Any:
    """json's `default` hook: refuse as json does, marking refused iterators."""
    kind = IteratorNotSerializable if isinstance(value, Iterator) else TypeError
    raise kind(f"Object of type {value.__class__.__name__} is not JSON serializable")


def raise_exception(message: Any) -> None:
    """Let the template refuse its input, as transformers' raise_exception does."""
    raise TemplateRaise(str(message))


def strftime_now(format: str) -> str:
    """Format the current local time, as transformers' strftime_now does."""
    return datetime.now().strftime(format)


def fixed_strftime_now(now: datetime) -> Callable[[str], str]:
    """Return a strftime_now that always formats `now` (for output that must not vary)."""

    def strftime_at(format: str) -> str:
        return now.strftime(format)

    # A closure, not a partial: a partial's `.func` and `.args` would be readable by templates.
    return strftime_at


class TemplateDict:
    """transformers' `dict` global: callable and `fromkeys`, nothing else reachable."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict(*args, **kwargs)

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict.fromkeys(*args, **kwargs)


class TemplateNamespace(Namespace):
    """transformers' `namespace`: refuses underscore-prefixed attribute names."""

    def __init__(*args: Any, **kwargs: Any) -> None:  # no named self, so namespace(self=1) works
        self, rest = args[0], args[1:]
        attrs = dict(*rest, **kwargs)
        for name in attrs:
            TemplateNamespace.check_name(name)
        Namespace.__init__(self, attrs)

    def __setitem__(self, name: str, value: Any) -> None:
        TemplateNamespace.check_name(name)
        Namespace.__setitem__(self, name, value)

    @staticmethod
    def check_name(name: Any) -> None:
        """Refuse names that could reach Python internals."""
        if isinstance(name, str) and name.startswith("_"):
            raise SecurityError(
                f"namespace attribute names may not start with an underscore; found {name!r}"
            )


def hf_globals(limits: RenderLimits, now: datetime | None = None) -> dict[str, Any]:
    """Return the globals transformers adds, plus the bounded range() and lipsum().

    With `now`, strftime_now formats that moment instead of the current time.
    """
    return {
        "raise_exception": raise_exception,
        "strftime_now": strftime_now if now is None else fixed_strftime_now(now),
        "dict": TemplateDict(),
        "namespace": TemplateNamespace,
        "range": checked_range(limits),
        "lipsum": partial(_checked_lipsum, limits),
    }


def _checked_lipsum(
    limits: RenderLimits, n: int = 5, html: bool = True, min: int = 20, max: int = 100
) -> str:
    check_count("lipsum()", n, limits)
    check_text_size("lipsum()", n * max * 12 if isinstance(max, int) else 0, limits)
    return str(generate_lorem_ipsum(n, html, min, max))


def hf_tojson(
    limits: RenderLimits,
    value: Any,
    ensure_ascii: bool = False,
    indent: int | str | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    """Serialize like transformers' tojson (no HTML escaping, non-ASCII kept), bounded."""
    return bounded_json(
        limits, value, refuse_unserializable, ensure_ascii, indent, separators, sort_keys
    )


def bounded_json(
    limits: RenderLimits,
    value: Any,
    default: Callable[[Any], Any] | None,
    ensure_ascii: bool,
    indent: int | str | None,
    separators: tuple[str, str] | None,
    sort_keys: bool,
) -> str:
    """Serialize value as json.dumps does (default converts what JSON lacks), within limits."""
    if indent is None:
        # json's C encoder cannot be interrupted, so bound the value's size before calling it
        # (unless it is the caller's own data: a tree, not a graph the template built).
        if id(value) not in current_budget().trusted:
            size = text_size(value, limits.max_output_chars)
            check_text_size("the tojson output", size, limits)
        return json.dumps(
            value, ensure_ascii=ensure_ascii, separators=separators, sort_keys=sort_keys,
            default=default,
        )
    # With an indent json encodes in Python anyway (as json.dumps would): count as it goes.
    # One chunk can hold depth x indent characters, so the indent itself is capped first.
    width = len(indent) if isinstance(indent, str) else indent
    if isinstance(width, int) and width > MAX_JSON_INDENT:
        raise LimitExceeded(
            "output_size",
            f"tojson indent of {width:,} characters; the limit is {MAX_JSON_INDENT:,}",
            MAX_JSON_INDENT,
        )
    encoder = json.JSONEncoder(
        ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys,
        default=default,
    )
    return _joined_within(encoder.iterencode(value), "the tojson output", limits)


def _joined_within(chunks: Iterator[str], what: str, limits: RenderLimits) -> str:
    parts, size = [], 0
    for chunk in chunks:
        size += len(chunk)
        if size > limits.max_output_chars:
            raise too_large(what, size, limits)
        parts.append(chunk)
    return "".join(parts)
