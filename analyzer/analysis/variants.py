"""Canonical render inputs for the comparisons, a caching renderer, and compare_variants.

Every needle (function names, argument names and values, call ids, message texts) differs
from its counterpart at both its first and its last character, so a diff between two
variants covers the whole needle.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from analyzer.analysis.budget import current_analysis_budget, stop_if_repeating
from analyzer.analysis.diff import diff_split
from analyzer.errors import (
    AnalyzerError,
    RenderLimitError,
    SandboxViolationError,
    TemplateRaisedError,
    TemplateRenderError,
)
from analyzer.model import Comparison, Variant
from analyzer.render.template import ChatTemplate

USER_MSG = "U_MSG what is up U_END"
USER_MSG_2 = "V_MSG and then V_END"
ASSISTANT_MSG = "A_MSG here you go A_END"
REASONING_MSG = "R_MSG thinking it over R_END"
SYSTEM_MSG = "S_MSG be brief S_END"
TOOL_RESULT = "T_RES sunny and mild T_END"
FUNC_A = "fa_lookup_one"
FUNC_B = "gb_search_two"
ARG_A = "pa_city"
ARG_B = "qb_units"
VAL_A = "XXXX"
VAL_B = "YYYY"
TYPED_VAL = True  # a boolean tells JSON literals (true) from Python ones (True)
ID_A = "call00001"  # nine alphanumerics: Mistral templates insist
ID_B = "call99999"

Json = dict[str, Any]


def tool_definition(name: str) -> Json:
    """Return an OpenAI tool definition for name with the two probe arguments."""
    props = {
        ARG_A: {"type": "string", "description": "First argument"},
        ARG_B: {"type": "string", "description": "Second argument"},
    }
    params = {"type": "object", "properties": props, "required": []}
    function = {"name": name, "description": f"Probe function {name}", "parameters": params}
    return {"type": "function", "function": function}


TOOLS: list[Json] = [tool_definition(FUNC_A), tool_definition(FUNC_B)]


def user(text: str = USER_MSG) -> Json:
    return {"role": "user", "content": text}


def system(text: str = SYSTEM_MSG) -> Json:
    return {"role": "system", "content": text}


def tool_result(text: str = TOOL_RESULT, call_id: str = ID_A, name: str = FUNC_A) -> Json:
    return {"role": "tool", "content": text, "tool_call_id": call_id, "name": name}


def assistant(
    content: str | None = ASSISTANT_MSG,
    *,
    reasoning: str | None = None,
    tool_calls: list[Json] | None = None,
) -> Json:
    """Build an assistant message; reasoning and tool calls only when given."""
    message: Json = {"role": "assistant", "content": content}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    return message


@dataclass(frozen=True)
class CallFactory:
    """Build tool calls with arguments as an object or, if the template wants, a string."""

    string_args: bool = False

    def call(self, name: str = FUNC_A, args: Json | None = None, call_id: str = ID_A) -> Json:
        """Build one OpenAI tool call."""
        values: Json = {ARG_A: VAL_A, ARG_B: VAL_B} if args is None else args
        arguments: Any = json.dumps(values, ensure_ascii=False) if self.string_args else values
        function = {"name": name, "arguments": arguments}
        return {"id": call_id, "type": "function", "function": function}


@dataclass(frozen=True)
class RenderInput:
    """One set of template inputs, held as canonical JSON so it hashes and prints."""

    label: str
    params: str

    def decoded(self) -> Json:
        return dict(json.loads(self.params))


def render_input(
    label: str,
    messages: list[Json],
    *,
    tools: list[Json] | None = None,
    add_generation_prompt: bool = False,
    enable_thinking: bool | None = True,
) -> RenderInput:
    """Freeze render inputs; enable_thinking None leaves the variable unset."""
    kwargs: Json = {} if enable_thinking is None else {"enable_thinking": enable_thinking}
    params = {
        "messages": messages,
        "tools": tools,
        "add_generation_prompt": add_generation_prompt,
        "kwargs": kwargs,
    }
    # Key order is kept: templates see dicts in the order an API request would send them.
    text = json.dumps(params, ensure_ascii=False, separators=(",", ":"))
    return RenderInput(label, text)


@dataclass(frozen=True)
class RenderOutcome:
    """A render's text, or the reason the template refused it."""

    text: str | None
    error: str = ""
    # Why it failed: "raised" (the template's raise_exception), "limit", "lenient" (what only
    # transformers refuses: lenient mode goes past it), "sandbox" (any other operation the
    # sandbox refuses), "error" (any other Python error); "" when it rendered.
    failure: str = ""

    @property
    def ok(self) -> bool:
        return self.text is not None


@dataclass
class VariantRenderer:
    """Render inputs through one template, each distinct input once."""

    template: ChatTemplate
    defaults: dict[str, Any] = field(default_factory=dict)  # kwargs every render gets
    cache: dict[str, RenderOutcome] = field(default_factory=dict)
    rendered_any: bool = False
    limit_hits: int = 0  # renders that hit a limit before any rendered (see budget.py)

    def effective_params(self, inp: RenderInput) -> str:
        """The input's canonical JSON with the renderer's default kwargs merged in."""
        if not self.defaults:
            return inp.params
        params = inp.decoded()
        params["kwargs"] = {**self.defaults, **params["kwargs"]}
        return json.dumps(params, ensure_ascii=False, separators=(",", ":"))

    def render(self, inp: RenderInput) -> RenderOutcome:
        """Return the (cached) outcome of rendering inp."""
        outcome = self.cache.get(inp.params)
        if outcome is None:
            outcome = self._render_uncached(inp)
            self.cache[inp.params] = outcome
        return outcome

    def text(self, inp: RenderInput) -> str | None:
        return self.render(inp).text

    def _render_uncached(self, inp: RenderInput) -> RenderOutcome:
        current_analysis_budget().check(len(self.cache))
        params = inp.decoded()
        try:
            text = self.template.render(
                params["messages"],
                tools=params["tools"],
                add_generation_prompt=params["add_generation_prompt"],
                **{**self.defaults, **params["kwargs"]},
            )
        except TemplateRaisedError as exc:
            return RenderOutcome(None, exc.template_message, "raised")
        except RenderLimitError as exc:
            self.limit_hits += 0 if self.rendered_any else 1
            stop_if_repeating(exc, inp.label, self.limit_hits)
            return RenderOutcome(None, str(exc), "limit")
        except TemplateRenderError as exc:
            kind = "lenient" if exc.lenient_allows else (
                "sandbox" if isinstance(exc, SandboxViolationError) else "error")
            return RenderOutcome(None, str(exc), kind)
        except AnalyzerError as exc:
            return RenderOutcome(None, str(exc), "error")
        except Exception as exc:  # noqa: BLE001 - a template may fail in any Python way
            return RenderOutcome(None, f"{type(exc).__name__}: {exc}", "error")
        self.rendered_any = True
        return RenderOutcome(text)


def compare_variants(
    renderer: VariantRenderer, cid: str, title: str, a: RenderInput, b: RenderInput
) -> Comparison:
    """Render a and b and diff them; a refused render marks the comparison unsupported."""
    out_a, out_b = renderer.render(a), renderer.render(b)
    var_a = Variant(a.label, renderer.effective_params(a), out_a.text or "")
    var_b = Variant(b.label, renderer.effective_params(b), out_b.text or "")
    if out_a.text is None or out_b.text is None:
        note = out_a.error if out_a.text is None else out_b.error
        return Comparison(cid, title, var_a, var_b, None, "unsupported", note)
    return Comparison(cid, title, var_a, var_b, diff_split(out_a.text, out_b.text), "ok")


def skipped(cid: str, title: str, reason: str) -> Comparison:
    """Record a comparison that was not run, and why."""
    return Comparison(cid, title, None, None, None, "skipped", reason)
