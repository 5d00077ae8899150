"""The render inputs of the tool comparisons T1-T7 and A1-A3."""

from __future__ import annotations

from typing import Any

from analyzer.analysis.variants import (
    ARG_A,
    ARG_B,
    FUNC_A,
    FUNC_B,
    ID_B,
    TOOLS,
    TYPED_VAL,
    VAL_A,
    VAL_B,
    CallFactory,
    RenderInput,
    assistant,
    render_input,
    user,
)


def calls_input(label: str, calls: list[dict[str, Any]]) -> RenderInput:
    """Render input: a user turn, then an assistant turn with these calls and no text."""
    return render_input(label, [user(), assistant("", tool_calls=calls)], tools=TOOLS)


def no_calls() -> RenderInput:
    return render_input("answer text", [user(), assistant()], tools=TOOLS)


def one_call(f: CallFactory) -> RenderInput:
    return calls_input(f"call {FUNC_A}({ARG_A}, {ARG_B})", [f.call()])


def two_calls(f: CallFactory) -> RenderInput:
    # Same arguments and id in both calls: only the name (and any call index) differs.
    return calls_input(f"calls {FUNC_A} and {FUNC_B}", [f.call(), f.call(FUNC_B)])


def other_function(f: CallFactory) -> RenderInput:
    return calls_input(f"call {FUNC_B}({ARG_A}, {ARG_B})", [f.call(FUNC_B)])


def one_arg(f: CallFactory) -> RenderInput:
    return calls_input(f"call {FUNC_A}({ARG_A}={VAL_A})", [f.call(args={ARG_A: VAL_A})])


def other_arg_name(f: CallFactory) -> RenderInput:
    return calls_input(f"call {FUNC_A}({ARG_B}={VAL_A})", [f.call(args={ARG_B: VAL_A})])


def other_arg_value(f: CallFactory) -> RenderInput:
    return calls_input(f"call {FUNC_A}({ARG_A}={VAL_B})", [f.call(args={ARG_A: VAL_B})])


def typed_arg(f: CallFactory) -> RenderInput:
    return calls_input(f"call {FUNC_A}({ARG_A}={TYPED_VAL})", [f.call(args={ARG_A: TYPED_VAL})])


def zero_args(f: CallFactory) -> RenderInput:
    return calls_input(f"call {FUNC_A}()", [f.call(args={})])


def other_id(f: CallFactory) -> RenderInput:
    return calls_input(f"call {FUNC_A} with id {ID_B}", [f.call(call_id=ID_B)])


# Non-string values of each JSON type (the boolean one is TYPED_VAL, in typed_arg).
TYPED_VALUES: dict[str, Any] = {"number": 7, "object": {"k": "v"}, "array": [1], "null": None}


def typed_arg_of(f: CallFactory, json_type: str) -> RenderInput:
    """One call whose single argument has a value of the given JSON type."""
    value = TYPED_VALUES[json_type]
    return calls_input(f"call {FUNC_A}({ARG_A}={json_type})", [f.call(args={ARG_A: value})])
