"""A Jinja sandbox with Hugging Face's chat-template settings whose resource use is bounded.

The environment is the one transformers' `render_jinja_template` builds (same flags, with the
globals of `analyzer.render.hf_globals`). On top of that, every template it compiles is rewritten so
that loops check a deadline and `~` and output count their size, and size-amplifying
operators, filters (`analyzer.render.safe_filters`) and methods are checked before they allocate.
The checks are plain function calls: no thread or process per render.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from functools import partial, update_wrapper
from string import Formatter
from time import perf_counter
from types import BuiltinMethodType, MethodType
from typing import Any

import jinja2.ext
from jinja2 import Environment, nodes, pass_context
from jinja2.compiler import CodeGenerator
from jinja2.exceptions import SecurityError, TemplateSyntaxError
from jinja2.optimizer import Optimizer
from jinja2.parser import Parser
from jinja2.runtime import Context, Undefined, markup_join, str_join
from jinja2.sandbox import (
    ImmutableSandboxedEnvironment,
    SandboxedFormatter,
    modifies_known_mutable,
)
from jinja2.visitor import NodeTransformer
from markupsafe import EscapeFormatter, Markup

from analyzer.render.hf_globals import GenerationExtension, hf_globals, hf_tojson
from analyzer.render.limits import (
    RenderLimits,
    check_binop,
    check_str_method,
    check_text_size,
    current_budget,
    format_spec_width,
    text_size,
    too_large,
)
from analyzer.render.safe_filters import checked_filters
from analyzer.render.syntax import CountingStream

__all__ = [
    "BoundedEnvironment", "BoundingTransformer", "MutationRefused", "TimedIterable",
    "free_variables",
]

_METHOD_TYPES = (BuiltinMethodType, MethodType)
_DICT_ATTRIBUTES = frozenset(dir(dict))  # every name getattr finds on a plain dict
_PLAIN_TYPES = frozenset({str, dict, list})
_NUMBERS = (int, float, bool, type(None))
_FORMAT_METHODS = ("format", "format_map")
LOOP_FILTER = "_bounded_loop"
CONCAT_FILTER = "_bounded_concat"
OUTPUT_FILTER = "_counted_output"


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
                budget.tick()  # raises the time limit error, or moves the deadline on
                deadline = budget.deadline
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

    # Jinja's NodeTransformer builds a method name per node and copies every list it walks;
    # this walk (same order, same in-place result) dispatches on the class and edits lists.
    def visit(self, node: nodes.Node, *args: Any, **kwargs: Any) -> nodes.Node:
        rewrite = _REWRITES.get(node.__class__)
        if rewrite is None:
            self.generic_visit(node)
            return node
        return rewrite(self, node)

    def generic_visit(self, node: nodes.Node, *args: Any, **kwargs: Any) -> nodes.Node:
        for name in node.fields:
            value = getattr(node, name, None)
            if value.__class__ is list:
                for index, item in enumerate(value):
                    if isinstance(item, nodes.Node):
                        value[index] = self.visit(item)
            elif isinstance(value, nodes.Node):
                setattr(node, name, self.visit(value))
        return node

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


_REWRITES: dict[type[nodes.Node], Callable[[BoundingTransformer, Any], nodes.Node]] = {
    nodes.For: BoundingTransformer.visit_For,
    nodes.Concat: BoundingTransformer.visit_Concat,
    nodes.Output: BoundingTransformer.visit_Output,
}


def _filtered(expr: nodes.Expr, name: str, *consts: int) -> nodes.Filter:
    args: list[nodes.Expr] = [nodes.Const(c) for c in consts]
    filtered = nodes.Filter(expr, name, args, [], None, None)
    filtered.set_lineno(expr.lineno or 1)
    return filtered


class FoldingOnce(Optimizer):
    """Jinja's constant folder, remembering the subtrees it has already folded.

    Jinja's code generator folds every expression it writes, walking its whole subtree, and
    then writes (and folds) each of its sub-expressions in turn: a walk per nesting level.
    Folding is deterministic and a subtree is written in the same evaluation context as the
    expression around it, so a second fold of a subtree finds what the first did.
    """

    def __init__(self, environment: Environment | None) -> None:
        super().__init__(environment)
        # By id; the nodes are kept so that no new node can reuse a folded node's id.
        self.folded: dict[int, tuple[nodes.Node, nodes.Node]] = {}

    def generic_visit(self, node: nodes.Node, *args: Any, **kwargs: Any) -> nodes.Node:
        known = self.folded.get(id(node))
        if known is not None:
            return known[1]
        result = super().generic_visit(node, *args, **kwargs)
        self.folded[id(node)] = (node, result)
        return result


class BoundedCodeGenerator(CodeGenerator):
    """Jinja's code generator, folding each constant subtree once (the same code, faster)."""

    def __init__(self, environment: Environment, *args: Any, **kwargs: Any) -> None:
        super().__init__(environment, *args, **kwargs)
        if self.optimizer is not None:
            self.optimizer = FoldingOnce(environment)


# `x is defined`, `x is undefined`, `x | default(...)`: a template asking whether its caller
# passed x, typically before `set`ting a fallback.
_PROBES = frozenset({"defined", "undefined", "default", "d"})


def free_variables(tree: nodes.Template) -> frozenset[str]:
    """Name the variables a parsed template reads from its caller.

    Those are the names read but never set nor defined as a macro, and the names the template
    probes (`x is defined`, `x | default(...)`) even when it then sets a fallback (Seed-OSS's
    `thinking_budget`); a macro's parameters and loop variables are never the caller's.
    """
    # A name/context walk is enough here and far cheaper than meta.find_undeclared_variables.
    loaded: set[str] = set()
    stored: set[str] = set()
    probed: set[str] = set()
    bound: set[str] = set()
    for node in all_nodes(tree):
        kind = node.__class__
        if kind is nodes.Name:
            assert isinstance(node, nodes.Name)
            if node.ctx == "load":
                loaded.add(node.name)
            elif node.ctx in ("store", "param"):
                stored.add(node.name)
                if node.ctx == "param":
                    bound.add(node.name)
        elif kind is nodes.Macro:
            assert isinstance(node, nodes.Macro)
            stored.add(node.name)
            bound.add(node.name)
        elif kind is nodes.For:
            assert isinstance(node, nodes.For)
            bound.update(_names_in(node.target))
        elif kind in (nodes.Test, nodes.Filter):
            assert isinstance(node, (nodes.Test, nodes.Filter))
            if node.name in _PROBES and isinstance(node.node, nodes.Name):
                probed.add(node.node.name)
    return frozenset((loaded - stored) | (probed - bound))


def _names_in(target: nodes.Node) -> set[str]:
    found = [target, *all_nodes(target)]
    return {node.name for node in found if isinstance(node, nodes.Name)}


def all_nodes(tree: nodes.Node) -> Iterator[nodes.Node]:
    """Yield every node under tree (not tree itself), in no particular order."""
    # Jinja's find_all nests a generator per level; one stack walks a deep tree much faster.
    stack = [tree]
    while stack:
        node = stack.pop()
        for name in node.fields:
            value = getattr(node, name, None)
            if value.__class__ is list:
                children = [item for item in value if isinstance(item, nodes.Node)]
                stack.extend(children)
                yield from children
            elif isinstance(value, nodes.Node):
                stack.append(value)
                yield value


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


class MutationRefused(SecurityError):
    """The immutable sandbox's refusal of an in-place change to a template-made list/dict."""


class BoundedEnvironment(ImmutableSandboxedEnvironment):
    """transformers' chat-template sandbox, with every render bounded by RenderLimits.

    With `now`, strftime_now formats that fixed moment instead of the current time.
    """

    intercepted_binops = frozenset({"+", "*", "**", "%"})
    code_generator_class = BoundedCodeGenerator

    def __init__(self, limits: RenderLimits, *, now: datetime | None = None) -> None:
        super().__init__(
            trim_blocks=True,
            lstrip_blocks=True,
            extensions=[GenerationExtension, jinja2.ext.loopcontrols],
        )
        self.limits = limits
        self.failing_token_index: int | None = None  # None: the lexer failed, not the parser
        self.free_variables: frozenset[str] = frozenset()  # of the template last compiled
        self._safe_attributes: dict[tuple[type, str], bool] = {}
        self.globals.update(hf_globals(limits, now))
        self.filters.update(checked_filters(limits))
        self.filters["tojson"] = partial(hf_tojson, limits)
        self.filters[LOOP_FILTER] = bounded_loop
        self.filters[CONCAT_FILTER] = bounded_concat
        self.filters[OUTPUT_FILTER] = counted_output

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        """Tell whether a template may read this attribute (Jinja's answer, remembered)."""
        # For str, dict and list Jinja's answer depends on the type and the name only.
        kind = obj.__class__
        if kind not in _PLAIN_TYPES:
            return super().is_safe_attribute(obj, attr, value)
        known = self._safe_attributes.get((kind, attr))
        if known is None:
            known = super().is_safe_attribute(obj, attr, value)
            self._safe_attributes[(kind, attr)] = known
        return known

    def getattr(self, obj: Any, attribute: str) -> Any:
        """Read `obj.attribute` for the template, as Jinja's sandbox does."""
        # `message.content` on a dict: Python's getattr raises (slowly) and Jinja then reads the
        # item. A name that is no attribute of dict goes straight to the item; same result.
        if obj.__class__ is dict and attribute.__class__ is str and \
                attribute not in _DICT_ATTRIBUTES:
            try:
                return obj[attribute]
            except KeyError:
                return self.undefined(obj=obj, name=attribute)
        return super().getattr(obj, attribute)

    def unsafe_undefined(self, obj: Any, attribute: str) -> Undefined:
        """Refuse an unsafe attribute as Jinja does, marking in-place changes of a template's
        own list or dict (llama.cpp's Jinja allows those)."""
        if obj.__class__ in (list, dict) and modifies_known_mutable(obj, attribute) and \
                id(obj) not in current_budget().trusted:
            hint = f"access to attribute {attribute!r} of {type(obj).__name__!r} object is unsafe."
            return self.undefined(hint, name=attribute, obj=obj, exc=MutationRefused)
        return super().unsafe_undefined(obj, attribute)

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        parser = Parser(self, source, name, filename)
        counter = CountingStream(parser.stream)
        try:
            tree = parser.parse()
        except TemplateSyntaxError as exc:
            # Jinja's error has no column; the token the parser stopped at lets us find one.
            self.failing_token_index = counter.failing_index(exc)
            raise
        # Read now: the rewrite below and Jinja's constant folding change the tree in place.
        self.free_variables = free_variables(tree)
        bounded = BoundingTransformer().visit(tree)
        assert isinstance(bounded, nodes.Template)
        bounded.set_environment(self)  # the nodes added by the transformer need it too
        return bounded

    def call(self, context: Context, obj: Any, /, *args: Any, **kwargs: Any) -> Any:
        """Call a function for the template, checking time, depth and result size."""
        # Every macro, method and global call passes here: the checks are inlined.
        budget = current_budget()
        if perf_counter() > budget.deadline:
            budget.tick()  # raises the time limit error, or moves the deadline on
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


