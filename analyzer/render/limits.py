"""Resource limits for rendering untrusted templates, and the cheap checks that enforce them."""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from contextvars import ContextVar, Token
from dataclasses import dataclass
from typing import Any

from jinja2.runtime import Undefined
from jinja2.utils import Namespace

from analyzer.errors import Limit

# Python's int arithmetic on huge numbers runs in C without any check point, so numbers are
# capped by size before the operation (a 64 Kibit integer has about 20,000 digits).
MAX_INTEGER_BITS = 65_536


@dataclass(frozen=True)
class RenderLimits:
    """How much one render may compute before it is stopped."""

    max_output_chars: int = 2_000_000  # output, any single string, and all text produced
    max_seconds: float = 1.0
    # Items in one range(), in the input of a filter that loops in Python, or made from a count.
    max_range: int = 100_000
    max_call_depth: int = 100  # nested macro, caller() and recursive-loop calls
    # Compiling is not interruptible and grows faster than linearly with the template
    # (transformers' own templates are under 20,000 characters).
    max_template_chars: int = 100_000


_NONE: Mapping[int, object] = {}


class LimitExceeded(Exception):
    """Internal signal that a render went over a limit; the renderer adds where it happened."""

    def __init__(self, limit: Limit, message: str, allowed: float) -> None:
        super().__init__(message)
        self.limit = limit
        self.message = message
        self.allowed = allowed


# A render may take this many times its time limit in wall-clock time when the machine is busy.
WALL_CAP_FACTOR = 4


class Budget:
    """What one render has used so far: time, text produced, call depth."""

    __slots__ = ("limits", "deadline", "wall_cap", "cpu_start", "produced", "depth",
                 "max_chars", "trusted")

    def __init__(
        self, limits: RenderLimits, deadline: float, trusted: Mapping[int, object] = _NONE
    ) -> None:
        self.limits = limits
        self.trusted = trusted  # input containers by id: trees of bounded size, not graphs
        # `deadline` is a wall-clock time (perf_counter is cheap enough for every loop step);
        # when it passes, tick() checks the CPU time actually spent, so a busy machine
        # does not turn a fast render into a time-limit failure (and an analysis into a
        # different one). A wall-clock cap still bounds a starved render.
        self.deadline = deadline
        self.wall_cap = deadline + WALL_CAP_FACTOR * limits.max_seconds
        self.cpu_start = time.thread_time()
        self.produced = 0
        self.depth = 0
        self.max_chars = limits.max_output_chars

    def tick(self) -> None:
        """Stop the render if it has used its CPU time (or its wall-clock cap)."""
        now = time.perf_counter()
        if now <= self.deadline:
            return
        seconds = self.limits.max_seconds
        spent = time.thread_time() - self.cpu_start
        if spent < seconds and now < self.wall_cap:
            self.deadline = min(now + seconds - spent, self.wall_cap)  # waited, not worked
            return
        raise LimitExceeded("time", f"rendering took longer than {seconds:g} s", seconds)

    def produce(self, chars: int) -> None:
        """Count text the template produced, anywhere (output, macros, blocks)."""
        self.produced += chars
        if self.produced > self.max_chars:
            cap = self.limits.max_output_chars
            raise LimitExceeded(
                "output_size",
                f"the template produced more than {cap:,} characters of text"
                " (text built inside macros and set blocks counts too)",
                cap,
            )

    def check_depth(self) -> None:
        """Stop runaway recursion: calls nested deeper than allowed."""
        if self.depth > self.limits.max_call_depth:
            cap = self.limits.max_call_depth
            raise LimitExceeded(
                "recursion", f"calls nested more than {cap} deep (runaway recursion?)", cap
            )


# Outside a render (e.g. constant folding while compiling) nothing is counted.
_IDLE = Budget(RenderLimits(), float("inf"))
_BUDGET: ContextVar[Budget] = ContextVar("render_budget", default=_IDLE)


# The hooks run many times per render: fetch the budget with one C call, no Python frame.
current_budget = _BUDGET.get


class budget_for:  # noqa: N801 - used like a function: `with budget_for(limits):`
    """Give the renders inside this block a fresh budget under these limits."""

    __slots__ = ("limits", "trusted", "token")

    def __init__(self, limits: RenderLimits, trusted: Mapping[int, object] = _NONE) -> None:
        self.limits = limits
        self.trusted = trusted
        self.token: Token[Budget] | None = None

    def __enter__(self) -> Budget:
        deadline = time.perf_counter() + self.limits.max_seconds
        budget = Budget(self.limits, deadline, self.trusted)
        self.token = _BUDGET.set(budget)
        return budget

    def __exit__(self, *exc_info: object) -> None:
        assert self.token is not None
        _BUDGET.reset(self.token)


def too_large(what: str, size: float, limits: RenderLimits) -> LimitExceeded:
    """Build the error for a value that would exceed the output size limit."""
    cap = limits.max_output_chars
    return LimitExceeded(
        "output_size",
        f"{what} would be about {int(size):,} characters; the limit is {cap:,}",
        cap,
    )


def check_text_size(what: str, size: float, limits: RenderLimits) -> None:
    """Refuse to build a string or sequence of more than the output size limit."""
    if size > limits.max_output_chars:
        raise too_large(what, size, limits)


def check_template_size(source: str, limits: RenderLimits) -> None:
    """Refuse to compile a template longer than the limit."""
    if len(source) > limits.max_template_chars:
        cap = limits.max_template_chars
        raise LimitExceeded(
            "template_size", f"the template is {len(source):,} characters; the limit is {cap:,}",
            cap,
        )


def check_count(what: str, count: Any, limits: RenderLimits) -> None:
    """Refuse to create more items from a count than range() may."""
    if isinstance(count, int) and count > limits.max_range:
        cap = limits.max_range
        raise LimitExceeded("range", f"{what} of {count:,} items; the limit is {cap:,}", cap)


def check_items(what: str, value: Any, limits: RenderLimits) -> None:
    """Refuse to loop in Python over more than max_range items (or characters)."""
    if isinstance(value, (str, list, tuple, dict)) and len(value) > limits.max_range:
        cap = limits.max_range
        raise LimitExceeded(
            "range", f"{what} over {len(value):,} items; the limit is {cap:,}", cap
        )


def checked_range(limits: RenderLimits) -> Any:
    """Return a range() that refuses more than max_range items."""

    def bounded_range(*args: int) -> range:
        items = range(*args)
        check_count("range()", len(items), limits)
        return items

    return bounded_range


def text_size(value: Any, cap: int) -> int:
    """Estimate len(str(value)) by walking it, stopping early once past cap."""
    # Runs before every tojson and non-string output, so the common JSON types come first.
    total = 0
    stack = [value]
    while stack and total <= cap:
        item = stack.pop()
        kind = item.__class__
        if kind is str:
            total += len(item)
        elif kind is dict:
            total += 2 + 4 * len(item)
            if total <= cap:
                stack.extend(item.values())
                stack.extend(item.keys())
        elif kind is list or kind is tuple:
            total += 2 + 2 * len(item)
            if total <= cap:
                stack.extend(item)
        else:
            total += _other_size(item, stack)
    return total


def _other_size(item: Any, stack: list[Any]) -> int:
    if isinstance(item, str):
        return len(item)
    if isinstance(item, (list, tuple, set, frozenset, dict)):
        stack.extend(item.items() if isinstance(item, dict) else item)
        return 2 + 2 * len(item)
    return _scalar_size(item, stack)


def _scalar_size(item: Any, stack: list[Any]) -> int:
    if isinstance(item, bool) or item is None:
        return 5
    if isinstance(item, int):
        return item.bit_length() * 31 // 100 + 2
    if isinstance(item, (bytes, bytearray)):
        return 4 * len(item) + 3
    if isinstance(item, Undefined):
        return 0
    if isinstance(item, Namespace):
        stack.append(object.__getattribute__(item, "_Namespace__attrs"))
        return 12
    return 32  # floats, loop objects, macros: short reprs


def sized(value: Any) -> int | None:
    """Return len(value) for strings and sequences, None for anything else."""
    return len(value) if isinstance(value, _SEQUENCES) else None


def check_binop(operator: str, left: Any, right: Any, limits: RenderLimits) -> None:
    """Refuse `+`, `*`, `**` or `%` results that would be too large to build."""
    if operator == "+":
        check_sum(left, right, limits)
    elif operator == "*":
        check_product(left, right, limits)
    elif operator == "**":
        check_power(left, right)
    elif operator == "%" and isinstance(left, str):
        check_printf(left, right, limits)


_SEQUENCES = (str, bytes, list, tuple)


def check_sum(left: Any, right: Any, limits: RenderLimits) -> None:
    """Refuse concatenating two sequences into one over the size limit."""
    # `+` is everywhere in templates (`loop.index0 + 1`, `'<|' + role`): keep this path short.
    if isinstance(left, _SEQUENCES) and isinstance(right, _SEQUENCES):
        check_text_size("the concatenation", len(left) + len(right), limits)


def check_product(left: Any, right: Any, limits: RenderLimits) -> None:
    """Refuse repeating a sequence into one over the limit, or multiplying huge numbers."""
    for seq, count in ((left, right), (right, left)):
        if sized(seq) is not None and isinstance(count, int):
            check_text_size("the repeated sequence", repeated_size(seq, count, limits), limits)
            return
    if isinstance(left, int) and isinstance(right, int):
        _check_bits(left.bit_length() + right.bit_length())


def repeated_size(seq: Any, count: int, limits: RenderLimits) -> int:
    """Estimate the size of `seq * count`, counting what a list's items hold."""
    # `[a] * n` makes n references, but comparing, printing or serializing it walks n copies
    # of `a` in one C call: bound it by what it would print as, like any text.
    if count <= 0:
        return 0
    if isinstance(seq, (str, bytes)):
        return len(seq) * count
    per_copy = text_size(seq, limits.max_output_chars // count + 1)
    return max(per_copy - 2, len(seq)) * count  # the brackets once, not per copy


def check_power(base: Any, exponent: Any) -> None:
    """Refuse integer powers whose result would be huge."""
    if isinstance(base, int) and isinstance(exponent, int) and exponent > 0 and abs(base) > 1:
        _check_bits(exponent * base.bit_length())


def _check_bits(bits: int) -> None:
    if bits > MAX_INTEGER_BITS:
        raise LimitExceeded(
            "output_size",
            f"an integer of about {bits * 31 // 100:,} digits would be computed; the limit is"
            f" {MAX_INTEGER_BITS * 31 // 100:,} digits",
            MAX_INTEGER_BITS,
        )


_PRINTF_SPEC = re.compile(r"%(?:\([^)]*\))?[#0 +-]*(\*|\d+)?(?:\.(\*|\d+))?[hlL]?[a-zA-Z%]")


def check_printf(fmt: str, args: Any, limits: RenderLimits) -> None:
    """Refuse `fmt % args` when its widths and arguments add up to more than the limit."""
    size = len(fmt) + text_size(args, limits.max_output_chars)
    starred = False
    for spec in _PRINTF_SPEC.finditer(fmt):
        for number in spec.groups():
            if number == "*":
                starred = True
            elif number:
                size += int(number)
    if starred:
        star_values = args if isinstance(args, tuple) else (args,)
        size += sum(arg for arg in star_values if isinstance(arg, int) and arg > 0)
    check_text_size("the formatted string", size, limits)


_FORMAT_SPEC = re.compile(r"(?:.?[<>=^])?[+ -]?z?#?0?(\d*)[,_]?(?:\.(\d+))?")


def format_spec_width(spec: str) -> int:
    """Return the width plus precision a str.format spec asks for."""
    match = _FORMAT_SPEC.match(spec)
    if match is None:
        return 0
    return sum(int(number) for number in match.groups() if number)


def check_str_method(
    name: str, text: str | bytes, args: tuple[Any, ...], limits: RenderLimits
) -> tuple[Any, ...]:
    """Refuse str/bytes method calls that would build an oversized result; return the args."""
    if name in ("center", "ljust", "rjust", "zfill") and args:
        check_text_size(f"str.{name}()", args[0] if isinstance(args[0], int) else 0, limits)
    elif name == "expandtabs":
        tab = args[0] if args and isinstance(args[0], int) else 8
        tabs = text.count("\t") if isinstance(text, str) else text.count(b"\t")
        check_text_size("str.expandtabs()", len(text) + tabs * tab, limits)
    elif name == "replace" and len(args) >= 2:
        check_replace(text, args[0], args[1], limits)
    elif name == "join" and args:
        items = _materialized(args[0])
        check_join(items, text, limits)
        return (items, *args[1:])
    elif name == "translate" and args and isinstance(args[0], dict):
        longest = max((len(v) for v in args[0].values() if isinstance(v, str)), default=1)
        check_text_size("str.translate()", len(text) * max(longest, 1), limits)
    return args


def _materialized(items: Any) -> Any:
    if isinstance(items, (str, bytes, list, tuple, dict, Undefined)):
        return items
    return list(items)


def check_replace(text: Any, old: Any, new: Any, limits: RenderLimits) -> None:
    """Refuse a replace() whose result would exceed the size limit."""
    if not isinstance(old, (str, bytes)) or not isinstance(new, (str, bytes)):
        return
    if len(new) <= len(old):
        return
    if isinstance(text, type(old)):
        hits = text.count(old)  # type: ignore[arg-type]
        size = len(text)
    else:
        size = text_size(text, limits.max_output_chars)
        hits = size // max(len(old), 1) + 1
    check_text_size("the replaced string", size + hits * (len(new) - len(old)), limits)


def check_join(items: Any, separator: Any, limits: RenderLimits) -> None:
    """Refuse a join() whose result would exceed the size limit."""
    cap = limits.max_output_chars
    count = len(items) if hasattr(items, "__len__") else 0
    sep = len(separator) if isinstance(separator, (str, bytes)) else text_size(separator, cap)
    check_text_size("the joined string", text_size(items, cap) + sep * max(count - 1, 0), limits)
