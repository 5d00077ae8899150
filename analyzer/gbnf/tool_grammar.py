"""Build the grammar for one request: reasoning, content, then tool calls or a JSON answer.

With tool_choice "auto" the grammar is lazy: it starts at the tool-call trigger, so free
text before a call is never constrained. With "required" (or a named function) the grammar
covers the whole output: optional reasoning, content that cannot start a call, then calls.
A `json_schema` response format wins over tools, as in llama.cpp. The formats of dedicated
handlers (the analysis' `handler`) have grammars of their own (`analyzer.gbnf.handlers`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from analyzer.gbnf.builder import ROOT, GrammarBuilder, alt, chars, opt, seq
from analyzer.gbnf.errors import GrammarRequestError
from analyzer.gbnf.handlers import RoutedGrammar, routed_grammar
from analyzer.gbnf.json_schema import SchemaConverter
from analyzer.gbnf.result import GrammarResult, Trigger
from analyzer.gbnf.tool_calls import CallGrammar
from analyzer.gbnf.tool_specs import ToolSpec, read_tools
from analyzer.gbnf.triggers import call_triggers, content_stops, preserved_tokens
from analyzer.gbnf.until import text_excluding
from analyzer.model import Analysis, ContentMode, ReasoningMode, ToolFormat

ToolChoice = str | Mapping[str, Any]


def _choose_tools(
    tool_choice: ToolChoice, specs: tuple[ToolSpec, ...]
) -> tuple[str, tuple[ToolSpec, ...]]:
    """Return ("auto" | "required" | "none", the tools a call may use)."""
    if isinstance(tool_choice, str):
        if tool_choice not in ("auto", "required", "none"):
            raise GrammarRequestError(
                f"tool_choice: expected 'auto', 'required', 'none' or a function, "
                f"found {tool_choice!r}")
        return tool_choice, specs
    function = tool_choice.get("function")
    name = function.get("name") if isinstance(function, Mapping) else None
    chosen = tuple(spec for spec in specs if spec.name == name)
    if not chosen:
        raise GrammarRequestError(
            f"tool_choice names function {name!r}, but the tools are "
            f"{[spec.name for spec in specs]}")
    return "required", chosen


def _generation_prompt(analysis: Analysis, enable_thinking: bool | None) -> str | None:
    usable = [g for g in analysis.generation_prompts if g.label != "unsupported"]
    for wanted in (enable_thinking, None):
        for prompt in usable:
            if prompt.enable_thinking == wanted:
                return prompt.text
    return None


def _reasoning_state(analysis: Analysis, prompt: str | None, enable_thinking: bool | None) -> str:
    """Say how the output begins: "open" (inside reasoning), "closed", or "optional"."""
    start, end, mode = analysis.reasoning.start.strip(), analysis.reasoning.end.strip(), \
        analysis.reasoning.mode
    if mode == ReasoningMode.NONE or not end:
        return "closed"
    if prompt is not None:
        tail = prompt.rstrip()
        if tail.endswith(end):
            return "closed"
        return "open" if start and tail.endswith(start) else "optional"
    if mode == ReasoningMode.FORCED_CLOSED and enable_thinking is False:
        return "closed"
    forced = mode in (ReasoningMode.FORCED_OPEN, ReasoningMode.FORCED_CLOSED)
    return "open" if forced and enable_thinking is not False else "optional"


class _Request:
    """One grammar build: the analysis, a builder, and the rules shared by its parts."""

    def __init__(self, analysis: Analysis, builder: GrammarBuilder | None) -> None:
        self.analysis = analysis
        self.builder = builder or GrammarBuilder()
        self.calls = CallGrammar(self.builder, analysis.tools)
        self.ws = self.calls.ws

    def reasoning(self, state: str) -> str:
        """What the output holds before its answer: a reasoning block, maybe already open."""
        reasoning = self.analysis.reasoning
        if state == "closed":
            return ""
        # Beside the reasoning text, or (start, after_end) beside the content's text.
        self.builder.spell(reasoning.start, reasoning.end, reasoning.after_end)
        text = text_excluding(self.builder, [reasoning.end.strip()], "reasoning")
        # A turn header may follow the end when reasoning is a turn of its own (Solar Open).
        block = seq(text, self.calls.marker(reasoning.end), self.ws,
                    opt(self.calls.marker(reasoning.after_end)))
        if state == "open":
            return block
        no_start = reasoning.mode == ReasoningMode.DELIMITER or not reasoning.start.strip()
        # Reasoning that may not be there is read beside the content and calls that may
        # come instead: its text may hold any of their markers, so none is joined.
        self.builder.spell_everything = True
        return opt(block if no_start else seq(self.calls.marker(reasoning.start), block))

    def content(self, stops: Sequence[str]) -> str:
        """Visible text before the calls, which must not start a call by accident."""
        content = self.analysis.content
        if content.mode == ContentMode.ALWAYS_WRAPPED and content.start.strip() and \
                content.end.strip():
            self.builder.spell(content.start, content.end)  # beside the content's text
            text = text_excluding(self.builder, [content.end.strip()], "content")
            return opt(seq(self.calls.marker(content.start), text,
                           self.calls.marker(content.end), self.ws))
        return text_excluding(self.builder, stops, "content")

    def turn_end(self) -> str:
        """What the template writes to close the turn after calls; a model may write it too."""
        return opt(self.calls.marker(self.analysis.content.turn_end))

    def finish(self, root: str, *, lazy: bool, triggers: tuple[Trigger, ...] = (),
               tokens: tuple[str, ...] = ()) -> GrammarResult:
        self.builder.define(ROOT, root)
        kept = tuple(dict.fromkeys((*preserved_tokens(self.analysis), *tokens)))
        return GrammarResult(self.builder.render(), triggers, kept, lazy)


def _response_format(request: _Request, schema: Any, reasoning: str) -> GrammarResult:
    converter = SchemaConverter(request.builder, root_schema=schema)
    answer = converter.value(schema, "response")
    fenced = seq(chars("```json"), request.ws, answer, request.ws, chars("```"))
    return request.finish(seq(request.ws, reasoning, alt(fenced, answer), request.ws),
                          lazy=False)


def _routed(request: _Request, routed: RoutedGrammar, specs: tuple[ToolSpec, ...], choice: str,
            parallel: bool) -> GrammarResult:
    """The grammar of a dedicated handler's format."""
    if choice == "auto":
        return request.finish(routed.from_trigger(specs, parallel=parallel), lazy=True,
                              triggers=routed.triggers(specs), tokens=routed.tokens)
    return request.finish(routed.whole_output(specs, parallel=parallel), lazy=False,
                          tokens=routed.tokens)


def build_tool_grammar(
    analysis: Analysis,
    tools: Sequence[Mapping[str, Any]] | None,
    *,
    parallel_tool_calls: bool = False,
    tool_choice: ToolChoice = "auto",
    enable_thinking: bool | None = None,
    json_schema: Any = None,
    generation_prompt: str | None = None,
    builder: GrammarBuilder | None = None,
) -> GrammarResult:
    """Build the GBNF grammar, triggers and preserved tokens for one chat request.

    `builder` collects the rules (a fresh one by default); pass one to inspect it after, or
    `GrammarBuilder(join=False)` for the grammar with every marker spelled.
    """
    request = _Request(analysis, builder)
    prompt = generation_prompt if generation_prompt is not None else \
        _generation_prompt(analysis, enable_thinking)
    state = _reasoning_state(analysis, prompt, enable_thinking)
    if json_schema is not None:
        return _response_format(request, json_schema, request.reasoning(state))
    choice, specs = _choose_tools(tool_choice, read_tools(tools))
    routed = routed_grammar(analysis.handler, request.calls)
    if routed is not None and choice != "none" and specs:
        return _routed(request, routed, specs, choice, parallel_tool_calls)
    if choice == "none" or not specs or analysis.tools.format.mode == ToolFormat.NONE:
        if choice == "required" and specs:
            raise GrammarRequestError("tool_choice requires a call, but the analysis found no "
                                      "tool-call format in this template")
        return GrammarResult("", (), preserved_tokens(analysis), False)
    calls = seq(request.calls.section(specs, parallel=parallel_tool_calls),
                request.turn_end())
    if choice == "auto":
        triggers = call_triggers(analysis.tools, specs)
        return request.finish(seq(calls, request.ws), lazy=True, triggers=triggers)
    reasoning = request.reasoning(state)
    content = request.content(content_stops(analysis.tools, specs))
    return request.finish(seq(request.ws, reasoning, content, calls, request.ws), lazy=False)
