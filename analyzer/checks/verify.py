"""Round-trip self-verification: render canonical assistant messages, parse them back, compare.

Each case is one assistant message (plain content, reasoning, one call, tricky arguments,
parallel calls, a call id, ...). It is rendered through the template after a user turn; the
part the model would have generated is what the full conversation (no generation prompt) adds
after the conversation rendered with the generation prompt, minus the text the template closes
every assistant turn with. The parser generated from the analysis must give the message back
(compared by llama.cpp's test rules), and the GBNF grammar built for the same request must
accept the same text. A case the template cannot show (it refuses the message, drops a part of
it, or renders it in a way that does not continue its own generation prompt) is skipped with
the reason: there is nothing a parser could recover.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import lru_cache
from typing import Any

from analyzer.analysis.diff import MARKER_RE, common_prefix_fixed, common_suffix_fixed
from analyzer.analysis.pipeline import analyze, compiled
from analyzer.canonical import dumps_canonical
from analyzer.errors import AnalyzerError
from analyzer.gbnf import GrammarResult, TriggerKind, build_tool_grammar, match_text
from analyzer.generator import PromptContext, conversation_context, generate_parser
from analyzer.model import Analysis, CallIdPosition, ReasoningMode, ToolFormat
from analyzer.parsing.message import Message, ToolCall
from analyzer.parsing.options import ParseOptions
from analyzer.render.loading import TemplateSource, load_template_text
from analyzer.render.template import ChatTemplate
from analyzer.version import ANALYZER_VERSION


class Outcome(StrEnum):
    """The verdict of one check."""

    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"  # nothing to check: the template cannot show the message, or no grammar


# The tools every request of a verification carries (calls use them, the prompt lists them).
TOOLS: tuple[dict[str, Any], ...] = (
    {"type": "function", "function": {
        "name": "get_weather", "description": "Current weather in a city",
        "parameters": {"type": "object", "properties": {
            "location": {"type": "string", "description": "City name"}},
            "required": ["location"]}}},
    {"type": "function", "function": {
        "name": "search_records", "description": "Search the record store",
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string", "description": "Free text"},
            "city": {"type": "string", "description": "Where"},
            "limit": {"type": "integer", "description": "Most results"},
            "ratio": {"type": "number", "description": "Minimum score"},
            "exact": {"type": "boolean", "description": "Exact match only"},
            # anyOf, not a type list: Hermes-style templates recurse forever on ["x", "null"].
            "cursor": {"anyOf": [{"type": "integer"}, {"type": "null"}],
                       "description": "Page cursor"},
            # Command R+'s template reads additionalProperties of every object parameter.
            "filters": {"type": "object", "description": "Field filters",
                        "properties": {
                            "country": {"type": "string"},
                            "range": {"type": "object", "properties": {
                                "min": {"type": "integer"}, "max": {"type": "integer"}},
                                "additionalProperties": False},
                            "open": {"type": "boolean"}},
                        "additionalProperties": False},
            "tags": {"type": "array", "description": "Tags", "items": {"type": "string"}}},
            "required": ["query"]}}},
)

USER_TEXT = "Where should I go this weekend?"
CONTENT = "Paris is a fine choice.\nThe museums open at 9."
REASONING = "The user wants a trip idea. Paris is close and the weather is mild."
TURN_PROBE = "Turn-end probe 7Q."  # a content whose render shows what closes a turn
CALL_IDS = ("a1B2c3D4e", "f5G6h7J8k")  # nine alphanumerics: what Mistral's templates demand

STRING_ARGUMENTS = {
    "query": "<b>bold</b> & <i>markup</i>\nsecond line\ttabbed",
    "city": "Zürich — 東京 🌸",
}
QUOTED_ARGUMENTS = {"query": 'He said "hi", it\'s \\ fine'}
SCALAR_ARGUMENTS = {"query": "hotels", "limit": 3, "ratio": 0.25, "exact": True, "cursor": None}
NESTED_ARGUMENTS = {
    "query": "museums",
    "filters": {"country": "FR", "range": {"min": 1, "max": 5}, "open": False},
    "tags": ["art", "two words", "çà"],
}


@dataclass(frozen=True)
class Case:
    """A canonical assistant message to round-trip through the template and the parser."""

    name: str
    message: Message  # what the parser must give back; arguments are JSON text
    thinking: bool = False  # prefer enable_thinking on when rendering
    parallel: bool = False  # the request allows parallel calls
    check_ids: bool = False  # the call ids must come back too


@dataclass(frozen=True)
class GrammarCheck:
    """Whether the request's GBNF grammar agrees with the rendered output."""

    outcome: Outcome
    # "required": the grammar covers the whole output, which must match; "auto": the lazy
    # grammar's triggers must not fire inside an output that holds no call.
    mode: str
    detail: str


@dataclass(frozen=True)
class CaseResult:
    """One case: the text cut from the render, what came back, and the differences."""

    case: str
    outcome: Outcome
    enable_thinking: bool | None
    output: str  # the generated part as cut from the render ("" when skipped)
    expected: Message
    actual: Message | None
    differences: tuple[str, ...]
    grammar: GrammarCheck
    note: str = ""  # why the case was skipped, or how its output was cut from the render


@dataclass(frozen=True)
class Verification:
    """Every case of one template, with the round-trip and grammar verdicts over all cases."""

    analyzer_version: str
    template_sha256: str
    round_trip: Outcome  # fail if any case failed; pass if any passed; else skip
    grammar: Outcome
    cases: tuple[CaseResult, ...]

    @property
    def failures(self) -> tuple[CaseResult, ...]:
        """The cases whose round trip or grammar check failed."""
        return tuple(c for c in self.cases
                     if Outcome.FAIL in (c.outcome, c.grammar.outcome))


@dataclass(frozen=True)
class Subject:
    """What every case of one verification shares."""

    analysis: Analysis
    chat: ChatTemplate
    kwargs: Mapping[str, str]  # serving-side variables the template cannot render without


@dataclass(frozen=True)
class Rendered:
    """A case rendered through the template: the request and the model's generated part."""

    enable_thinking: bool | None
    options: ParseOptions
    prompt: PromptContext
    output: str
    note: str = ""  # set when the render does not continue the generation prompt


def verify_template(
    template: TemplateSource | str, *, analysis: Analysis | None = None
) -> Verification:
    """Round-trip every applicable case through the template and its generated parser."""
    source = template if isinstance(template, TemplateSource) else load_template_text(template)
    analysis = analysis or analyze(source)
    chat = compiled(source.source, source.bos_token, source.eos_token, analysis.render_mode)
    subject = Subject(analysis, chat, required_kwargs(chat, analysis))
    results = tuple(verify_case(subject, case) for case in verification_cases(analysis))
    return Verification(
        analyzer_version=ANALYZER_VERSION,
        template_sha256=source.sha256,
        round_trip=overall(r.outcome for r in results),
        grammar=overall(r.grammar.outcome for r in results),
        cases=results,
    )


def verification_to_json(verification: Verification) -> str:
    """Serialize a verification to canonical JSON."""
    return dumps_canonical(verification)


def overall(outcomes: Iterator[Outcome] | tuple[Outcome, ...]) -> Outcome:
    """Fail if anything failed, pass if anything passed, else skip."""
    seen = set(outcomes)
    for verdict in (Outcome.FAIL, Outcome.PASS):
        if verdict in seen:
            return verdict
    return Outcome.SKIP


# --- the cases -------------------------------------------------------------------------------

def call(name: str, arguments: Mapping[str, Any], index: int = 0) -> ToolCall:
    """Build a call whose arguments are JSON text."""
    return ToolCall(name, json.dumps(arguments, ensure_ascii=False), CALL_IDS[index])


def carries_ids(analysis: Analysis) -> bool:
    """Tell whether the analysis found call ids in rendered calls."""
    tools = analysis.tools
    return tools.call_id.pos != CallIdPosition.NONE or bool(tools.format.id_field)


def verification_cases(analysis: Analysis) -> tuple[Case, ...]:
    """List the cases that apply to what the analysis found."""
    mode = analysis.reasoning.mode
    cases = [Case("content", Message(content=CONTENT))]
    if mode not in (ReasoningMode.NONE, ReasoningMode.TOOLS_ONLY):
        cases.append(Case("reasoning", Message(content=CONTENT, reasoning_content=REASONING),
                          thinking=True))
    if analysis.tools.format.mode != ToolFormat.NONE:
        cases += call_cases(analysis)
    return tuple(cases)


def call_cases(analysis: Analysis) -> list[Case]:
    """List the tool-call cases for a template that renders calls."""
    weather = call("get_weather", {"location": "Paris"})
    cases = [
        Case("call", Message(tool_calls=(weather,))),
        Case("call-strings", Message(tool_calls=(call("search_records", STRING_ARGUMENTS),))),
        Case("call-quotes", Message(tool_calls=(call("search_records", QUOTED_ARGUMENTS),))),
        Case("call-scalars", Message(tool_calls=(call("search_records", SCALAR_ARGUMENTS),))),
        Case("call-nested", Message(tool_calls=(call("search_records", NESTED_ARGUMENTS),))),
    ]
    if analysis.caps.supports_parallel_tool_calls:
        second = call("search_records", {"query": "hotels", "limit": 5}, 1)
        cases.append(Case("parallel-calls", Message(tool_calls=(weather, second)),
                          parallel=True))
    if carries_ids(analysis):
        cases.append(Case("call-id", Message(tool_calls=(weather,)), check_ids=True))
    if analysis.reasoning.mode != ReasoningMode.NONE:
        cases.append(Case("reasoning-call",
                          Message(reasoning_content=REASONING, tool_calls=(weather,)),
                          thinking=True))
    return cases


# --- rendering -------------------------------------------------------------------------------

_UNDEFINED_RE = re.compile(r"'(\w+)' is undefined")


def required_kwargs(chat: ChatTemplate, analysis: Analysis) -> dict[str, str]:
    """Give "" to each serving-side variable the template cannot render without."""
    found: dict[str, str] = {}
    for _ in range(len(analysis.caps.template_kwargs) + 1):
        extra: dict[str, Any] = dict(found)
        try:
            chat.render(user_turn(analysis), tools=list(TOOLS), add_generation_prompt=True,
                        **extra)
            return found
        except AnalyzerError as exc:
            match = _UNDEFINED_RE.search(str(exc))
            name = match.group(1) if match else ""
            if name not in analysis.caps.template_kwargs or name in found:
                return found
            found[name] = ""
    return found


def user_turn(analysis: Analysis) -> list[dict[str, Any]]:
    """The conversation before the assistant's message."""
    if analysis.caps.requires_typed_content:
        return [{"role": "user", "content": [{"type": "text", "text": USER_TEXT}]}]
    return [{"role": "user", "content": USER_TEXT}]


def thinking_settings(subject: Subject, case: Case) -> tuple[bool | None, ...]:
    """The enable_thinking values to try, the preferred first."""
    if "enable_thinking" not in subject.analysis.caps.template_kwargs:
        return (None,)
    return (True, None, False) if case.thinking else (None, False, True)


def message_forms(case: Case, subject: Subject) -> Iterator[dict[str, Any]]:
    """Yield the case's message in the shapes templates accept (content "" or null, ...)."""
    message = case.message
    if not message.tool_calls:
        yield with_reasoning({"role": "assistant", "content": message.content}, message, subject)
        return
    caps = subject.analysis.caps
    as_text = (False, True) if not caps.requires_object_arguments else (False,)
    # Content "" then null with calls (templates test either); a message's own content as is.
    contents: list[str | None] = [message.content] if message.content else ["", None]
    for content, text_arguments in [(contents[0], form) for form in as_text] \
            + [(text, False) for text in contents[1:]]:
        body = {"role": "assistant", "content": content,
                "tool_calls": [call_dict(c, text_arguments) for c in message.tool_calls]}
        yield with_reasoning(body, message, subject)


def with_reasoning(body: dict[str, Any], message: Message, subject: Subject) -> dict[str, Any]:
    """Add the message's reasoning under the field the template reads."""
    if message.reasoning_content:
        body[subject.analysis.reasoning.field or "reasoning_content"] = message.reasoning_content
    return body


def call_dict(tool_call: ToolCall, text_arguments: bool) -> dict[str, Any]:
    """Return a call in OpenAI form, arguments as JSON text or as an object."""
    arguments = tool_call.arguments if text_arguments else json.loads(tool_call.arguments)
    return {"id": tool_call.id, "type": "function",
            "function": {"name": tool_call.name, "arguments": arguments}}


def render(subject: Subject, messages: list[dict[str, Any]], options: ParseOptions,
           generation_prompt: bool) -> str:
    """Render as the generator does: the options' tools and template variables."""
    return subject.chat.render(messages, tools=options.tools or None,
                               add_generation_prompt=generation_prompt,
                               **options.render_kwargs())


def case_options(subject: Subject, case: Case, enable_thinking: bool | None,
                 with_tools: bool = True) -> ParseOptions:
    """The request a case stands for."""
    return ParseOptions.make(tools=list(TOOLS) if with_tools else [],
                             enable_thinking=enable_thinking,
                             parallel_tool_calls=case.parallel,
                             chat_template_kwargs=subject.kwargs)


def requests(subject: Subject, case: Case) -> Iterator[ParseOptions]:
    """Yield the requests to try: each thinking setting with tools, then (for a message
    without calls) without tools, for templates whose tool prompt cannot render."""
    for with_tools in (True, False) if not case.message.tool_calls else (True,):
        for enable_thinking in thinking_settings(subject, case):
            yield case_options(subject, case, enable_thinking, with_tools)


def render_case(subject: Subject, case: Case) -> Rendered | str:
    """Render the case in the first setting and shape that shows all of it; else say why not.

    A render that continues the generation prompt exactly wins over one that needed
    realigning (see `generated_start`). The robustness check renders the same base cases as the
    verification of the same template: each is rendered once.
    """
    return _rendered_case(subject.analysis, subject.chat, tuple(subject.kwargs.items()), case)


@lru_cache(maxsize=64)
def _rendered_case(analysis: Analysis, chat: ChatTemplate, kwargs: tuple[tuple[str, str], ...],
                   case: Case) -> Rendered | str:
    # The compiled template is compared by identity: the same object is the same template.
    subject = Subject(analysis, chat, dict(kwargs))
    problems: list[str] = []
    realigned: Rendered | None = None
    for options in requests(subject, case):
        for message in message_forms(case, subject):
            found = render_one(subject, case, options, message)
            if isinstance(found, str):
                tools = "" if options.tools else ", no tools"
                problems.append(f"enable_thinking={options.enable_thinking}{tools}: {found}")
            elif not found.note:
                return found
            else:
                realigned = realigned or found
    return realigned or "; ".join(dict.fromkeys(problems))


def render_one(subject: Subject, case: Case, options: ParseOptions,
               message: dict[str, Any]) -> Rendered | str:
    """Render one shape of the case; return the cut output, or why it cannot be verified."""
    before = user_turn(subject.analysis)
    try:
        prompt = render(subject, before, options, True)
        full = render(subject, [*before, message], options, False)
        closing = turn_end(subject, before, options)
        context = conversation_context(subject.chat, subject.analysis, before, options)
    except AnalyzerError as exc:
        return f"the template refused the message ({first_line(exc)})"
    start = generated_start(prompt, full, subject.analysis)
    if isinstance(start, str):
        return start
    at, note = start
    output = cut_turn_end(full[at:], closing, subject.analysis.preserved_tokens)
    missing = invisible_parts(case, output)
    if missing:
        return f"the template does not show the {missing}"
    unescaped = unescaped_strings(case, output)
    if unescaped:
        return unescaped
    if left_open(context, output, subject.analysis):
        return ("the render leaves the message inside the reasoning block the generation "
                "prompt opened (no reasoning end before it), which no model output would do")
    return Rendered(options.enable_thinking, options, context, output, note)


def generated_start(prompt: str, full: str, analysis: Analysis) -> tuple[int, str] | str:
    """Find where the model's part begins in the full render; return it with a note, or why not.

    Exact: the render continues the prompt. Otherwise two template habits are undone, each
    noted: a prompt that closes an empty reasoning block the history leaves out (QwQ,
    DeepSeek-R1), and a prompt that puts text before the assistant header that the history
    puts elsewhere (Command R+'s tool instructions).
    """
    if full.startswith(prompt):
        return len(prompt), ""
    cut = common_prefix_fixed(prompt, full)
    extra = prompt[cut:]
    if closes_empty_reasoning(extra, analysis):
        return cut, (f"the generation prompt ends with an empty reasoning block {extra!r} "
                     "that the render of the message leaves out")
    header = prompt[last_marker_start(prompt):]
    found = full.find(header, cut) if header else -1
    opens_reasoning = analysis.reasoning.start.strip() and \
        analysis.reasoning.start.strip() in extra[: len(extra) - len(header)]
    if found >= 0 and not opens_reasoning:
        return found + len(header), (f"the generation prompt puts {extra[:-len(header)][:80]!r}"
                                     f"... before the assistant header {header!r}, which the "
                                     "render of the message does not")
    return f"the render of the message does not continue the generation prompt " \
           f"(which ends with {extra[-60:]!r})"


def last_marker_start(text: str) -> int:
    """Return where the last marker of text starts (len(text) when there is none)."""
    starts = [m.start() for m in MARKER_RE.finditer(text)]
    return starts[-1] if starts else len(text)


def closes_empty_reasoning(text: str, analysis: Analysis) -> bool:
    """Tell whether text is just an empty reasoning block (start and end markers)."""
    start, end = analysis.reasoning.start.strip(), analysis.reasoning.end.strip()
    if not start or not end:
        return False
    return re.fullmatch(rf"\s*{re.escape(start)}\s*{re.escape(end)}\s*", text) is not None


def turn_end(subject: Subject, before: list[dict[str, Any]], options: ParseOptions) -> str:
    """Return what the template writes to close an assistant turn (after any content wrapper).

    The model writes the wrapper's closing marker itself, so it stays in the output.
    """
    probe = {"role": "assistant", "content": TURN_PROBE}
    text = render(subject, [*before, probe], options, False)
    at = text.rfind(TURN_PROBE)
    closing = text[at + len(TURN_PROBE):] if at >= 0 else ""
    wrapper_end = subject.analysis.content.end.strip()
    if wrapper_end and closing.lstrip().startswith(wrapper_end):
        return closing.lstrip()[len(wrapper_end):]
    return closing


def cut_turn_end(output: str, closing: str, known: tuple[str, ...]) -> str:
    """Drop the turn's closing text and trailing end-of-generation tokens."""
    output = output[: len(output) - common_suffix_fixed(output, closing)]
    while True:
        output = output.rstrip()
        last = [m for m in MARKER_RE.finditer(output) if m.end() == len(output)]
        # A trailing marker the analysis does not know closes the turn (an EOS-like token).
        if not last or any(last[-1].group() in token for token in known):
            return output
        output = output[: last[-1].start()]


def invisible_parts(case: Case, output: str) -> str:
    """Name the parts of the case's message the rendered output does not show."""
    message = case.message
    missing = [label for label, text in (("content", message.content),
                                         ("reasoning", message.reasoning_content))
               if text and text.strip() not in output]
    missing += [f"call {c.name}" for c in message.tool_calls if c.name not in output]
    if case.check_ids:
        missing += [f"call id {c.id}" for c in message.tool_calls if c.id not in output]
    return ", ".join(missing)


def left_open(context: PromptContext, output: str, analysis: Analysis) -> bool:
    """Tell whether the parse starts inside reasoning that the output never closes."""
    start, end = analysis.reasoning.start.strip(), analysis.reasoning.end.strip()
    opened = bool(start) and start in context.tail and end not in context.tail
    return opened and bool(end) and end not in output


def unescaped_strings(case: Case, output: str) -> str:
    """Say which string argument the template writes unescaped inside its own quote character.

    `'it's'` cannot be read back by any parser: the case tests the template, not the parser.
    """
    for tool_call in case.message.tool_calls:
        for key, value in json.loads(tool_call.arguments).items():
            for quote in ("'", '"'):
                if isinstance(value, str) and quote in value and \
                        f"{quote}{value}{quote}" in output:
                    return (f"the template writes argument {key!r} unescaped between {quote} "
                            "quotes, so no parser can read it back")
    return ""


# --- checking --------------------------------------------------------------------------------

def verify_case(subject: Subject, case: Case) -> CaseResult:
    """Render, cut, parse back and compare one case; check the grammar on the same text."""
    rendered = render_case(subject, case)
    expected = expected_message(case, rendered.output if isinstance(rendered, Rendered) else "")
    if isinstance(rendered, str):
        skipped = GrammarCheck(Outcome.SKIP, "", "the case was not rendered")
        return CaseResult(case.name, Outcome.SKIP, None, "", expected, None, (), skipped,
                          note=rendered)
    actual, deviations, error = parse(subject, rendered)
    differences = (f"parse error: {error}",) if actual is None else \
        tuple(message_differences(expected, actual)) + deviations
    return CaseResult(
        case=case.name,
        outcome=Outcome.FAIL if differences else Outcome.PASS,
        enable_thinking=rendered.enable_thinking,
        output=rendered.output,
        expected=expected,
        actual=actual,
        differences=differences,
        grammar=check_grammar(subject, case, rendered),
        note=rendered.note,
    )


def expected_message(case: Case, output: str) -> Message:
    """The message to compare with: call ids only when the case checks them, and without the
    null arguments the template leaves out (an absent argument reads as null)."""
    calls = tuple(replace(c, id=c.id if case.check_ids else "",
                          arguments=shown_arguments(c.arguments, output))
                  for c in case.message.tool_calls)
    return replace(case.message, tool_calls=calls)


def shown_arguments(arguments: str, output: str) -> str:
    """Drop null arguments whose name the output does not show."""
    values = json.loads(arguments)
    kept = {k: v for k, v in values.items() if v is not None or not output or k in output}
    return arguments if kept == values else json.dumps(kept, ensure_ascii=False)


def parse(subject: Subject, rendered: Rendered) -> tuple[Message | None, tuple[str, ...], str]:
    """Parse the output with the generated parser; return the message and its deviations
    (the template's own rendering must have none), or the error."""
    try:
        parser = generate_parser(subject.analysis, rendered.options, prompt=rendered.prompt)
        report = parser.parse_report(rendered.output)
    except AnalyzerError as exc:
        return None, (), f"{type(exc).__name__}: {exc}"
    except Exception as exc:  # noqa: BLE001 - a crashing parser is a finding, not a stop
        return None, (), f"internal error: {type(exc).__name__}: {exc}"
    deviations = tuple(f"deviation on the template's own rendering: {d.message}"
                       for d in report.deviations)
    return report.message, deviations, ""


def message_differences(expected: Message, actual: Message) -> list[str]:
    """Compare by llama.cpp's test rules: trimmed text, calls in order, arguments as JSON."""
    found = [f"{key}: expected {want!r}, actual {got!r}"
             for key, want, got in (("content", expected.content, actual.content),
                                    ("reasoning_content", expected.reasoning_content,
                                     actual.reasoning_content))
             if want.strip() != got.strip()]
    return found + call_differences(expected.tool_calls, actual.tool_calls)


def call_differences(expected: tuple[ToolCall, ...], actual: tuple[ToolCall, ...]) -> list[str]:
    """Compare tool calls: count, names, ids (when expected), JSON-equal arguments."""
    if len(expected) != len(actual):
        shown = [f"{c.name}({c.arguments})" for c in actual]
        return [f"tool_calls: expected {len(expected)}, actual {len(actual)} {shown}"]
    found = []
    for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
        where = f"tool_calls[{index}]"
        if want.name != got.name:
            found.append(f"{where}.name: expected {want.name!r}, actual {got.name!r}")
        if want.id and want.id != got.id:
            found.append(f"{where}.id: expected {want.id!r}, actual {got.id!r}")
        if json_or_text(want.arguments) != json_or_text(got.arguments):
            found.append(f"{where}.arguments: expected {want.arguments}, actual {got.arguments}")
    return found


def json_or_text(text: str) -> Any:
    """Decode JSON arguments; text that is not JSON compares as itself."""
    try:
        return json.loads(text)
    except ValueError:
        return ("not JSON", text)


def check_grammar(subject: Subject, case: Case, rendered: Rendered) -> GrammarCheck:
    """Check the output against the grammar built for the same request."""
    if subject.analysis.tools.format.mode == ToolFormat.NONE:
        return GrammarCheck(Outcome.SKIP, "", "the analysis found no tool-call format")
    if not rendered.options.tools:
        return GrammarCheck(Outcome.SKIP, "", "the case was rendered without tools")
    mode = "required" if case.message.tool_calls else "auto"
    try:
        result = request_grammar(subject.analysis, case.parallel, mode,
                                 rendered.enable_thinking, rendered.prompt.generation_prompt)
        return grammar_verdict(result, mode, rendered.output)
    except ImportError as exc:
        return GrammarCheck(Outcome.SKIP, mode, f"the grammar engine is missing ({exc})")
    except AnalyzerError as exc:
        return GrammarCheck(Outcome.FAIL, mode, f"{type(exc).__name__}: {exc}")


def request_grammar(analysis: Analysis, parallel: bool, mode: str, enable_thinking: bool | None,
                    generation_prompt: str) -> GrammarResult:
    """The grammar of one request shape: a template's cases share a few (built once each)."""
    return _request_grammar(without_identity(analysis), parallel, mode, enable_thinking,
                            generation_prompt)


def without_identity(analysis: Analysis) -> Analysis:
    """The analysis without the template's name and hash, which no grammar reads: templates
    that differ only where no render shows it (a comment, a whitespace-trimmed line) share
    their grammars."""
    return replace(analysis, template_sha256="", template_name="")


# A corpus' templates need ~110 distinct request grammars (~8 KB each).
@lru_cache(maxsize=256)
def _request_grammar(analysis: Analysis, parallel: bool, mode: str,
                     enable_thinking: bool | None, generation_prompt: str) -> GrammarResult:
    return build_tool_grammar(
        analysis, list(TOOLS), parallel_tool_calls=parallel, tool_choice=mode,
        enable_thinking=enable_thinking, generation_prompt=generation_prompt)


def grammar_verdict(result: GrammarResult, mode: str, output: str) -> GrammarCheck:
    """Match the whole output ("required"), or make sure no trigger fires in it ("auto")."""
    if mode == "auto":
        fired = trigger_start(result, output)
        if fired is None:
            return GrammarCheck(Outcome.PASS, mode, "no trigger fires in the output")
        return GrammarCheck(Outcome.FAIL, mode,
                            f"a trigger fires at offset {fired} of an output with no call: "
                            f"{output[fired:fired + 40]!r}")
    found = match_text(result.grammar, output)
    outcome = Outcome.PASS if found.accepted else Outcome.FAIL
    return GrammarCheck(outcome, mode, found.describe())


def trigger_start(result: GrammarResult, text: str) -> int | None:
    """Return where the first trigger of a lazy grammar fires in text, or None."""
    starts = []
    for trigger in result.triggers:
        if trigger.kind == TriggerKind.WORD:
            at = text.find(trigger.value)
        else:
            found = re.search(trigger.value, text)
            at = found.start(1) if found else -1
        if at >= 0:
            starts.append(at)
    return min(starts) if starts else None


def first_line(exc: BaseException) -> str:
    """Return the first line of an exception's message."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
