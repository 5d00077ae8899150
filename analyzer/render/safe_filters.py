"""Jinja's filters, each checked for an oversized result before it runs."""

from __future__ import annotations

from collections.abc import Callable
from functools import update_wrapper
from typing import Any

from jinja2.filters import FILTERS

from analyzer.render.limits import (
    RenderLimits,
    check_count,
    check_items,
    check_join,
    check_printf,
    check_replace,
    check_text_size,
    text_size,
    too_large,
)

# Filters whose work is a Python loop over their input (a key function, a test, a getter per
# item): at a few microseconds an item, a long input would run for seconds without any check
# point, so their inputs are capped at max_range items (characters, for strings).
ITEM_LOOPS = frozenset(
    {"batch", "dictsort", "groupby", "join", "map", "max", "min", "reject", "rejectattr",
     "select", "selectattr", "slice", "sort", "sum", "unique", "urlize", "wordwrap", "xmlattr"}
)


def checked_filters(limits: RenderLimits) -> dict[str, Callable[..., Any]]:
    """Return Jinja's filters, each checked for oversized inputs and results."""
    return {name: _guarded(name, original, limits) for name, original in FILTERS.items()}


def _guarded(name: str, original: Callable[..., Any], limits: RenderLimits) -> Callable[..., Any]:
    """Wrap a Jinja filter: check its input before it runs and its text result after."""
    check = _SIZE_CHECKS.get(name)
    loops = name in ITEM_LOOPS

    def checked(value: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if loops:
            check_items(f"the {name} filter", value, limits)
        return value if check is None else check(limits, value, *args, **kwargs)

    def finished(result: Any) -> Any:
        # Filters like urlencode or escape grow text a few times over: chained, they would not
        # stop, so every text result is held to the size limit.
        if isinstance(result, str) and len(result) > limits.max_output_chars:
            raise too_large(f"the {name} filter's result", len(result), limits)
        return result

    if hasattr(original, "jinja_pass_arg"):

        def with_context(first: Any, value: Any, *args: Any, **kwargs: Any) -> Any:
            return finished(original(first, checked(value, args, kwargs), *args, **kwargs))

        return update_wrapper(with_context, original)

    def plain(value: Any, *args: Any, **kwargs: Any) -> Any:
        return finished(original(checked(value, args, kwargs), *args, **kwargs))

    return update_wrapper(plain, original)


def _check_center(limits: RenderLimits, value: Any, width: Any = 80) -> Any:
    check_text_size("the centered string", width if isinstance(width, int) else 0, limits)
    return value


def _check_indent(
    limits: RenderLimits, s: Any, width: Any = 4, first: Any = False, blank: Any = False
) -> Any:
    step = len(width) if isinstance(width, str) else width if isinstance(width, int) else 0
    size = text_size(s, limits.max_output_chars)
    lines = s.count("\n") + 1 if isinstance(s, str) else size
    check_text_size("the indented string", size + lines * step, limits)
    return s


def _check_format(limits: RenderLimits, value: Any, *args: Any, **kwargs: Any) -> Any:
    if isinstance(value, str):
        check_printf(value, kwargs or args, limits)
    return value


def _check_join(limits: RenderLimits, value: Any, d: Any = "", attribute: Any = None) -> Any:
    items = value if isinstance(value, (str, list, tuple, dict)) else list(value)
    check_join(items, d, limits)
    return items


def _check_replace(
    limits: RenderLimits, s: Any, old: Any = "", new: Any = "", count: Any = None
) -> Any:
    check_replace(s, old, new, limits)
    return s


def _check_wordwrap(
    limits: RenderLimits,
    s: Any,
    width: Any = 79,
    break_long_words: Any = True,
    wrapstring: Any = None,
    break_on_hyphens: Any = True,
) -> Any:
    size = text_size(s, limits.max_output_chars)
    breaks = size // width + 1 if isinstance(width, int) and width > 0 else 0
    extra = len(wrapstring) if isinstance(wrapstring, str) else 1
    check_text_size("the wrapped string", size + breaks * extra, limits)
    return s


def _check_batch(limits: RenderLimits, value: Any, linecount: Any, fill_with: Any = None) -> Any:
    if fill_with is not None:
        check_count("batch() padding", linecount, limits)
    return value


def _check_slice(limits: RenderLimits, value: Any, slices: Any, fill_with: Any = None) -> Any:
    check_count("slice()", slices, limits)
    return value


def _check_sum(limits: RenderLimits, iterable: Any, attribute: Any = None, start: Any = 0) -> Any:
    if not isinstance(start, (str, list, tuple)):
        return iterable
    items = list(iterable)
    size = len(start) + sum(len(item) for item in items if isinstance(item, (str, list, tuple)))
    check_text_size("the summed sequence", size, limits)
    return items


def _check_stringify(limits: RenderLimits, value: Any, *args: Any, **kwargs: Any) -> Any:
    check_text_size("the string", text_size(value, limits.max_output_chars), limits)
    return value


_SIZE_CHECKS: dict[str, Callable[..., Any]] = {
    "center": _check_center,
    "indent": _check_indent,
    "format": _check_format,
    "join": _check_join,
    "replace": _check_replace,
    "wordwrap": _check_wordwrap,
    "batch": _check_batch,
    "slice": _check_slice,
    "sum": _check_sum,
    "string": _check_stringify,
    "pprint": _check_stringify,
}
