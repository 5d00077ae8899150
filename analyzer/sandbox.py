"""A Jinja sandbox with Hugging Face's chat-template settings whose resource use is bounded.

The environment reproduces what transformers' `render_jinja_template` builds (flags, `tojson`,
`raise_exception`, `strftime_now`, `dict`, `namespace`, the `{% generation %}` tag). On top of
that, every template it compiles is rewritten so that loops check a deadline, `~` and output
count their size, and size-amplifying operators, filters and methods are checked before they
allocate. The checks are plain function calls: no thread or process per render.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import datetime
from functools import partial, update_wrapper
from string import Formatter
from time import perf_counter
from types import BuiltinMethodType, MethodType
from typing import Any

import jinja2.ext
from jinja2 import nodes, pass_context
from jinja2.exceptions import SecurityError, TemplateSyntaxError
from jinja2.filters import FILTERS
from jinja2.parser import Parser
from jinja2.runtime import Context, markup_join, str_join
from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedFormatter
from jinja2.utils import Namespace, generate_lorem_ipsum
from jinja2.visitor import NodeTransformer
from markupsafe import EscapeFormatter, Markup

from analyzer.limits import (
    LimitExceeded,
    RenderLimits,
    check_binop,
    check_count,
    check_join,
    check_printf,
    check_replace,
    check_str_method,
    check_text_size,
    checked_range,
    current_budget,
    format_spec_width,
    text_size,
    too_large,
)
from analyzer.syntax import CountingStream

_METHOD_TYPES = (BuiltinMethodType, MethodType)
_NUMBERS = (int, float, bool, type(None))
MAX_JSON_INDENT = 1_000
_FORMAT_METHODS = ("format", "format_map")
LOOP_FILTER = "_bounded_loop"
CONCAT_FILTER = "_bounded_concat"
OUTPUT_FILTER = "_counted_output"


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


def raise_exception(message: Any) -> None:
    """Let the template refuse its input, as transformers' raise_exception does."""
    raise TemplateRaise(str(message))


def strftime_now(format: str) -> str:
    """Format the current local time, as transformers' strftime_now does."""
    return datetime.now().strftime(format)


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
                "Chat templates cannot store underscore-prefixed attributes on a namespace,"
                f" but got {name!r}. Please rename the attribute."
            )


class TimedIterable:
    """An iterable that checks the render's deadline before each item."""

    __slots__ = ("items",)

    def __init__(self, items: Any) -> None:
        self.items = items

    def __iter__(self) -> Iterator[Any]:
        budget = current_budget()
        clock, deadline = perf_counter, budget.deadline
        for item in self.items:
            if clock() > deadline:
                budget.tick()  # raises the time limit error
            yield item

    def __len__(self) -> int:
        # LoopContext asks for the length; a TypeError makes it count the items instead.
        return len(self.items)


@pass_context
def bounded_loop(context: Context, items: Any) -> TimedIterable:
    """Wrap a for loop's iterable so each iteration checks the deadline."""
    return TimedIterable(items)


@pass_context
def bounded_concat(context: Context, parts: tuple[Any, ...]) -> str:
    """Join `a ~ b ~ c` after checking the result's size."""
    limits = current_budget().limits
    cap = limits.max_output_chars
    check_text_size("the `~` concatenation", sum(text_size(p, cap) for p in parts), limits)
    escaping = context.eval_ctx.autoescape or context.eval_ctx.volatile
    return markup_join(parts) if escaping else str_join(parts)


@pass_context
def counted_output(context: Context, value: Any, literal_chars: int) -> Any:
    """Count an output value and the literal text beside it against the text budget."""
    budget = current_budget()
    kind = value.__class__
    if kind is str:
        budget.produced += len(value) + literal_chars
    elif kind in _NUMBERS:
        budget.produced += 24 + literal_chars  # Python refuses to print ints over 4300 digits
    else:
        budget.produced += text_size(value, budget.max_chars) + literal_chars
    if budget.produced > budget.max_chars:
        budget.produce(0)  # raises the limit error
    return value


class BoundingTransformer(NodeTransformer):
    """Rewrite a template's tree so loops, `~` and output go through the counting filters."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        assert isinstance(node.iter, nodes.Expr)
        node.iter = _filtered(node.iter, LOOP_FILTER)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        parts = nodes.Tuple(node.nodes, "load", lineno=node.lineno)
        return _filtered(parts, CONCAT_FILTER)

    def visit_Output(self, node: nodes.Output) -> nodes.Node:
        self.generic_visit(node)
        literal = sum(len(c.data) for c in node.nodes if isinstance(c, nodes.TemplateData))
        children: list[nodes.Expr] = []
        for child in node.nodes:
            if isinstance(child, nodes.Expr) and not isinstance(child, nodes.TemplateData):
                children.append(_filtered(child, OUTPUT_FILTER, literal))
                literal = 0
            else:
                children.append(child)
        if literal:
            children.insert(0, _filtered(nodes.Const(""), OUTPUT_FILTER, literal))
        node.nodes = children
        return node


def _filtered(expr: nodes.Expr, name: str, *consts: int) -> nodes.Filter:
    args: list[nodes.Expr] = [nodes.Const(c) for c in consts]
    filtered = nodes.Filter(expr, name, args, [], None, None)
    filtered.set_lineno(expr.lineno or 1)
    return filtered


class CheckedFormatter(SandboxedFormatter):
    """str.format for templates: refuses fields whose widths or values add up past the limit."""

    def __init__(self, env: BoundedEnvironment, **kwargs: Any) -> None:
        super().__init__(env, **kwargs)
        self.limits = env.limits
        self.produced = 0

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        if conversion is not None:
            size = text_size(value, self.limits.max_output_chars)
            check_text_size("a !r/!s/!a format field", size, self.limits)
        return super().convert_field(value, conversion)

    def format_field(self, value: Any, format_spec: str) -> Any:
        self.produced += format_spec_width(format_spec)
        self.produced += text_size(value, self.limits.max_output_chars)
        check_text_size("the formatted string", self.produced, self.limits)
        return super().format_field(value, format_spec)


class CheckedEscapeFormatter(CheckedFormatter, EscapeFormatter):
    """CheckedFormatter for Markup strings (escapes the fields)."""


class BoundedEnvironment(ImmutableSandboxedEnvironment):
    """transformers' chat-template sandbox, with every render bounded by RenderLimits."""

    intercepted_binops = frozenset({"+", "*", "**", "%"})

    def __init__(self, limits: RenderLimits) -> None:
        super().__init__(
            trim_blocks=True,
            lstrip_blocks=True,
            extensions=[GenerationExtension, jinja2.ext.loopcontrols],
        )
        self.limits = limits
        self.failing_token_index: int | None = None  # None: the lexer failed, not the parser
        self.globals.update(hf_globals(limits))
        self.filters.update(checked_filters(limits))

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        parser = Parser(self, source, name, filename)
        counter = CountingStream(parser.stream)
        try:
            tree = parser.parse()
        except TemplateSyntaxError as exc:
            # Jinja's error has no column; the token the parser stopped at lets us find one.
            self.failing_token_index = counter.failing_index(exc)
            raise
        bounded = BoundingTransformer().visit(tree)
        assert isinstance(bounded, nodes.Template)
        bounded.set_environment(self)  # the nodes added by the transformer need it too
        return bounded

    def call(self, context: Context, obj: Any, /, *args: Any, **kwargs: Any) -> Any:
        """Call a function for the template, checking time, depth and result size."""
        # Every macro, method and global call passes here: the checks are inlined.
        budget = current_budget()
        if perf_counter() > budget.deadline:
            budget.tick()  # raises the time limit error
        if obj.__class__ in _METHOD_TYPES and isinstance(obj.__self__, (str, bytes)):
            args = check_str_method(obj.__name__, obj.__self__, args, self.limits)
        if not self.is_safe_callable(obj):
            raise SecurityError(f"{obj!r} is not safely callable")
        budget.depth += 1
        if budget.depth > self.limits.max_call_depth:
            budget.check_depth()  # raises the recursion limit error
        try:
            result = context.call(obj, *args, **kwargs)
        finally:
            budget.depth -= 1
        if result.__class__ is str and len(result) > self.limits.max_output_chars:
            raise too_large("a function's result", len(result), self.limits)
        return result

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        """Apply `+`, `*`, `**` or `%` after checking the result would not be huge."""
        # `'<|' + role + '|>'` is the common case: check it without further calls.
        if operator == "+" and left.__class__ is str and right.__class__ is str:
            if len(left) + len(right) > self.limits.max_output_chars:
                check_binop(operator, left, right, self.limits)
            return left + right
        check_binop(operator, left, right, self.limits)
        return self.binop_table[operator](left, right)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        """Sandbox str.format/format_map with a formatter that checks sizes."""
        # Called on every attribute the template reads, so reject non-methods first.
        if value.__class__ not in _METHOD_TYPES or value.__name__ not in _FORMAT_METHODS:
            return None
        owner = value.__self__
        if not isinstance(owner, str):
            return None
        return update_wrapper(partial(self._format, owner, value.__name__), value)

    def _format(self, text: str, method_name: str, *args: Any, **kwargs: Any) -> str:
        if method_name == "format_map":
            if kwargs or len(args) != 1:
                raise TypeError("format_map() takes exactly one positional argument")
            kwargs = dict(args[0])
            args = ()
        formatter: Formatter
        if isinstance(text, Markup):
            formatter = CheckedEscapeFormatter(self, escape=text.escape)
        else:
            formatter = CheckedFormatter(self)
        return type(text)(formatter.vformat(text, args, kwargs))


def hf_globals(limits: RenderLimits) -> dict[str, Any]:
    """Return the globals transformers adds, plus the bounded range() and lipsum()."""
    return {
        "raise_exception": raise_exception,
        "strftime_now": strftime_now,
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
    if indent is None:
        # json's C encoder cannot be interrupted, so bound the value's size before calling it
        # (unless it is the caller's own data: a tree, not a graph the template built).
        if id(value) not in current_budget().trusted:
            size = text_size(value, limits.max_output_chars)
            check_text_size("the tojson output", size, limits)
        return json.dumps(
            value, ensure_ascii=ensure_ascii, separators=separators, sort_keys=sort_keys
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
        ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
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


def checked_filters(limits: RenderLimits) -> dict[str, Callable[..., Any]]:
    """Return the filters that replace Jinja's: size-checked versions and the counting hooks."""
    checks: dict[str, Callable[..., Any]] = {
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
    filters = {
        name: _guarded(FILTERS[name], partial(check, limits)) for name, check in checks.items()
    }
    filters["tojson"] = partial(hf_tojson, limits)
    filters[LOOP_FILTER] = bounded_loop
    filters[CONCAT_FILTER] = bounded_concat
    filters[OUTPUT_FILTER] = counted_output
    return filters


def _guarded(original: Callable[..., Any], check: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a Jinja filter so `check` sees (and may replace) its value before it runs."""
    if hasattr(original, "jinja_pass_arg"):

        def with_context(first: Any, value: Any, *args: Any, **kwargs: Any) -> Any:
            return original(first, check(value, *args, **kwargs), *args, **kwargs)

        return update_wrapper(with_context, original)

    def plain(value: Any, *args: Any, **kwargs: Any) -> Any:
        return original(check(value, *args, **kwargs), *args, **kwargs)

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
