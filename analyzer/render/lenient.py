"""Lenient rendering: what llama.cpp's Jinja allows and transformers refuses, still bounded.

transformers renders chat templates in Jinja's immutable sandbox: a template may not change
a list or dict in place (`ids.append(x)`), and `tojson` fails on the generator a `map(...)`
filter returns. llama.cpp's Jinja engine (and minja before it) allows both, and real
templates rely on it (Kimi K2's keep a queue of call ids in a list). The analysis falls back
to this environment only when the exact render refuses; everything else is unchanged: the
same limits, the same refusal of internals, and the caller's own data stays read-only.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from functools import partial
from itertools import islice
from types import BuiltinMethodType
from typing import Any

from jinja2.runtime import Context
from jinja2.sandbox import SandboxedEnvironment

from analyzer.render.hf_globals import bounded_json
from analyzer.render.limits import (
    RenderLimits,
    check_count,
    check_text_size,
    current_budget,
    text_size,
)
from analyzer.render.sandbox import BoundedEnvironment

# The in-place methods a template may call on a list or dict it built itself.
MUTATING_METHODS: dict[type, frozenset[str]] = {
    list: frozenset({"append", "extend", "insert", "pop", "remove", "clear", "reverse"}),
    dict: frozenset({"update", "pop", "popitem", "setdefault", "clear"}),
}
# Of those, the ones that add items: the container may not grow past max_range items.
GROWING_METHODS = frozenset({"append", "extend", "insert", "update", "setdefault"})
# Jinja passes these to every call it makes inside a loop or block; they are not arguments.
JINJA_CALL_KWARGS = frozenset({"_loop_vars", "_block_vars"})


class LenientEnvironment(BoundedEnvironment):
    """The bounded sandbox, plus in-place list/dict changes and tojson of generators."""

    def __init__(self, limits: RenderLimits, *, now: datetime | None = None) -> None:
        super().__init__(limits, now=now)
        self.filters["tojson"] = partial(lenient_tojson, limits)

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        """Allow a mutating method of a template-made list or dict; otherwise as transformers."""
        if attr in MUTATING_METHODS.get(obj.__class__, ()) and not is_input(obj):
            # Skip only the immutable sandbox's check: names and internals are still checked.
            return SandboxedEnvironment.is_safe_attribute(self, obj, attr, value)
        return super().is_safe_attribute(obj, attr, value)

    def call(self, context: Context, obj: Any, /, *args: Any, **kwargs: Any) -> Any:
        """Call a function for the template; a growing list or dict is size-checked first."""
        if obj.__class__ is BuiltinMethodType and obj.__name__ in GROWING_METHODS:
            owner = obj.__self__
            if owner.__class__ in MUTATING_METHODS:
                args = checked_growth(owner, obj.__name__, args, kwargs, self.limits)
        return super().call(context, obj, *args, **kwargs)


def is_input(container: Any) -> bool:
    """Tell whether a container is the caller's data (messages, tools...) for this render."""
    # The caller's data stays read-only: tojson trusts it to be a tree of known size.
    return id(container) in current_budget().trusted


def checked_growth(
    container: Any,
    method: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    limits: RenderLimits,
) -> tuple[Any, ...]:
    """Refuse growing a list or dict past max_range items; return the args to call with."""
    named = [name for name in kwargs if name not in JINJA_CALL_KWARGS]
    added = len(named) + (0 if method in ("extend", "update") else 1)
    if method in ("extend", "update") and args:
        items = args[0]
        if not isinstance(items, (list, tuple, str, Mapping)):
            # An iterator is read once: take it in full (bounded) and pass the items on.
            items = list(islice(items, limits.max_range + 1))
            args = (items, *args[1:])
        added += len(items)
    check_count(f"{type(container).__name__}.{method}() to a size", len(container) + added, limits)
    return args


def lenient_tojson(
    limits: RenderLimits,
    value: Any,
    ensure_ascii: bool = False,
    indent: int | str | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    """transformers' tojson, but a generator or other iterator is written as a JSON list."""
    default = IteratorsAsLists(limits)
    return bounded_json(limits, value, default, ensure_ascii, indent, separators, sort_keys)


class IteratorsAsLists:
    """json's `default` hook: read an iterator into a list, counting what it adds."""

    def __init__(self, limits: RenderLimits) -> None:
        self.limits = limits
        self.size = 0  # text the lists add, on top of what tojson checked before encoding

    def __call__(self, value: Any) -> list[Any]:
        if not isinstance(value, Iterator):
            # json's own message, as without the hook.
            raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
        items = list(islice(value, self.limits.max_range + 1))
        check_count("a generator given to tojson", len(items), self.limits)
        self.size += text_size(items, self.limits.max_output_chars)
        check_text_size("the tojson output", self.size, self.limits)
        return items
