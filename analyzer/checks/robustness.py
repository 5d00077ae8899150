"""The perturbation corpus: what models really write, derived from the template's own renders.

Canonical assistant messages are rendered through the template with verify's machinery; each
perturbation that fits the analysis' markers then edits the rendered output the way real
models depart from it (a doubled reasoning opener, a wrapper the template lacks, a missing
closing tag...). Each case knows by construction the message the parser must still give and
the deviation kind it must report. Two perturbations must NOT be accepted: a call of an
undeclared function stays content, and tool syntax quoted inside closed reasoning stays
reasoning. Every case is also streamed in seeded random chunks, which must give the one-shot
message. A parse that raises fails the whole message: counted apart, it must never happen.

Beyond the five first bases, the ones engines' parsers are commonly tested on are rendered
too (no arguments, typed and nested values, a string with quotes, escapes and markup-like
text, content with a call), and the perturbations include whitespace around markers, text
after the calls, and an output cut off inside a call, whose deviation kinds depend on how
the template closes a value (`Perturbed.deviations`).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from analyzer.analysis.diff import MARKER_RE, is_marker
from analyzer.analysis.pipeline import analyze, compiled
from analyzer.canonical import dumps_canonical
from analyzer.checks.verify import (
    CONTENT,
    REASONING,
    Case,
    Outcome,
    Rendered,
    Subject,
    call,
    expected_message,
    message_differences,
    render_case,
    required_kwargs,
)
from analyzer.errors import AnalyzerError
from analyzer.generator import GeneratedParser, generate_parser
from analyzer.generator.calls import marker_like
from analyzer.generator.python_calls import is_python_call_list
from analyzer.model import Analysis, ToolFormat
from analyzer.parsing.deviations import Deviation, DeviationKind
from analyzer.parsing.message import Message
from analyzer.parsing.stream import accumulate
from analyzer.render.loading import TemplateSource, load_template_text
from analyzer.version import ANALYZER_VERSION

K = DeviationKind
WEATHER = call("get_weather", {"location": "Paris"})
CONTENT_BEFORE = "Let me check.\n"
TYPED_ARGUMENTS = {"query": "hotels", "limit": 3, "ratio": 0.25, "exact": False, "cursor": None,
                   "filters": {"country": "FR", "range": {"min": 1, "max": 5}, "open": True},
                   "tags": ["art", "two words"]}
TRICKY_STRING = 'Say "hi" {a: [1]} </b> <x> C:\\dir\nnext line, Zürich 東京'
# The base messages perturbations start from (rendered by verify's machinery).
BASES: tuple[Case, ...] = (
    Case("call", Message(tool_calls=(WEATHER,))),
    Case("call-two-args", Message(tool_calls=(
        call("search_records", {"query": "hotels", "city": "Paris"}),))),
    Case("parallel-calls", Message(tool_calls=(
        WEATHER, call("search_records", {"query": "hotels", "limit": 5}, 1))), parallel=True),
    Case("reasoning", Message(content=CONTENT, reasoning_content=REASONING), thinking=True),
    Case("reasoning-call", Message(reasoning_content=REASONING, tool_calls=(WEATHER,)),
         thinking=True),
    # What engines' parsers are commonly tested on beyond one short string: a call without
    # arguments, typed and nested values (formats that print values as text must type them by
    # the schema), strings holding quotes, escapes, unicode and markup-like text, and content
    # written before a call.
    Case("call-no-args", Message(tool_calls=(call("get_weather", {}),))),
    Case("call-typed", Message(tool_calls=(call("search_records", TYPED_ARGUMENTS),))),
    Case("call-tricky-string", Message(tool_calls=(
        call("search_records", {"query": TRICKY_STRING}),))),
    Case("content-call", Message(content=CONTENT_BEFORE.strip(), tool_calls=(WEATHER,))),
)
UNDECLARED_NAME = "drop_all_tables"
CONTENT_AFTER = "Done."
# End-of-sequence texts of well-known tokenizers; the first one the template names is used.
KNOWN_EOS = ("<|im_end|>", "<|eot_id|>", "<|endoftext|>", "<｜end▁of▁sentence｜>", "<|end|>",
             "<end_of_turn>", "<|return|>", "</s>")
JSON_CALL = '{"name": "get_weather", "arguments": {"location": "Paris"}}'
LABELLED_OPENER = re.compile(r"(<[^<>\s]+>|\[[^\[\]\s]+\])([A-Za-z_]+)\s*$")


@dataclass(frozen=True)
class Base:
    """A base message rendered through the template."""

    case: Case
    rendered: Rendered
    expected: Message


@dataclass(frozen=True)
class Perturbed:
    """A perturbed output and the message it must still give."""

    base: Base
    output: str
    expected: Message
    # The deviation kinds when they depend on the template (None: the perturbation's own).
    deviations: tuple[DeviationKind, ...] | None = None


@dataclass(frozen=True)
class Context:
    """What every perturbation of one template reads."""

    subject: Subject
    source: TemplateSource
    bases: dict[str, Base]


Build = Callable[[Context], Perturbed | None]


@dataclass(frozen=True)
class Perturbation:
    """One way real output departs from the template, and the deviation it must report."""

    name: str
    expected: tuple[DeviationKind, ...]  # the kinds the parse must report (empty: none)
    build: Build
    accepted: bool = True  # False: the departing text must NOT be read as structure


@dataclass(frozen=True)
class RobustnessCase:
    """One (template, perturbation) case and its verdict."""

    perturbation: str
    base: str
    outcome: Outcome
    output: str
    expected: Message
    actual: Message | None
    expected_deviations: tuple[str, ...]
    actual_deviations: tuple[str, ...]
    differences: tuple[str, ...]
    whole_message_failed: bool  # the parse raised instead of returning a message
    note: str = ""


@dataclass(frozen=True)
class Robustness:
    """Every perturbation case of one template."""

    analyzer_version: str
    template_sha256: str
    cases: tuple[RobustnessCase, ...]

    @property
    def checked(self) -> tuple[RobustnessCase, ...]:
        """The cases that apply to the template (not skipped)."""
        return tuple(c for c in self.cases if c.outcome != Outcome.SKIP)

    @property
    def passed(self) -> int:
        """How many applicable cases gave the expected message and deviations."""
        return sum(c.outcome == Outcome.PASS for c in self.cases)

    @property
    def whole_message_failures(self) -> int:
        """How many applicable cases failed the whole message."""
        return sum(c.whole_message_failed for c in self.cases)


def robustness_to_json(result: Robustness) -> str:
    """Serialize a robustness result to canonical JSON."""
    return dumps_canonical(result)


def check_robustness(template: TemplateSource | str, *, analysis: Analysis | None = None,
                     seed: int = 0) -> Robustness:
    """Run every perturbation that fits the template; skip (with the reason) the others."""
    source = template if isinstance(template, TemplateSource) else load_template_text(template)
    analysis = analysis or analyze(source)
    chat = compiled(source.source, source.bos_token, source.eos_token, analysis.render_mode)
    subject = Subject(analysis, chat, required_kwargs(chat, analysis))
    context = Context(subject, source, rendered_bases(subject))
    cases = tuple(run_case(context, p, seed) for p in PERTURBATIONS)
    return Robustness(ANALYZER_VERSION, source.sha256, cases)


def rendered_bases(subject: Subject) -> dict[str, Base]:
    """Render the base messages the template can show (tool-capable templates only)."""
    if subject.analysis.tools.format.mode == ToolFormat.NONE:
        return {}
    found = {}
    for case in BASES:
        # A dedicated handler's template may put content written with calls in a channel of
        # its own (gpt-oss: analysis, which is reasoning): no content to expect by construction.
        if case.name == "content-call" and subject.analysis.handler != "auto":
            continue
        rendered = render_case(subject, case)
        if isinstance(rendered, Rendered) and not rendered.note:
            found[case.name] = Base(case, rendered, expected_message(case, rendered.output))
    return found


def run_case(context: Context, perturbation: Perturbation, seed: int) -> RobustnessCase:
    """Build one perturbation, parse it one-shot and streamed, and compare."""
    perturbed = perturbation.build(context) if context.bases else None
    wanted = perturbation.expected if perturbed is None or perturbed.deviations is None \
        else perturbed.deviations
    kinds = tuple(str(k) for k in wanted)
    if perturbed is None:
        return RobustnessCase(perturbation.name, "", Outcome.SKIP, "", Message(), None, kinds,
                              (), (), False, "the perturbation does not fit this template")
    actual, deviations, error = parse_both(context, perturbed, f"{seed}:{perturbation.name}")
    differences = [error] if error else message_differences(perturbed.expected, actual or
                                                            Message())
    if not error and sorted(deviations) != sorted(kinds):
        differences.append(f"deviations: expected {list(kinds)}, actual {list(deviations)}")
    return RobustnessCase(
        perturbation.name, perturbed.base.case.name,
        Outcome.FAIL if differences else Outcome.PASS, perturbed.output, perturbed.expected,
        actual, kinds, deviations, tuple(differences), bool(error) and actual is None)


def parse_both(context: Context, perturbed: Perturbed,
               seed: str) -> tuple[Message | None, tuple[str, ...], str]:
    """Parse one-shot and in random chunks; return the message, deviation kinds, any error."""
    rendered = perturbed.base.rendered
    try:
        parser = generate_parser(context.subject.analysis, rendered.options,
                                 prompt=rendered.prompt)
        report = parser.parse_report(perturbed.output)
        streamed, stream_kinds = streamed_message(parser, perturbed.output, random.Random(seed))
    except AnalyzerError as exc:
        return None, (), f"the whole message failed: {type(exc).__name__}: {exc}"
    except Exception as exc:  # noqa: BLE001 - a crashing parser is a finding, not a stop
        return None, (), f"the whole message failed: internal error: {type(exc).__name__}: {exc}"
    kinds = kinds_of(report.deviations)
    if streamed != report.message or stream_kinds != kinds:
        return report.message, kinds, (f"streaming differs from one-shot: {streamed.to_dict()} "
                                       f"{list(stream_kinds)}")
    return report.message, kinds, ""


def streamed_message(parser: GeneratedParser, output: str,
                     rng: random.Random) -> tuple[Message, tuple[str, ...]]:
    """Stream the output in random chunks (1 to 8 characters); return the message built."""
    stream = parser.stream()
    deltas, at = [], 0
    while at < len(output):
        step = rng.randint(1, 8)
        deltas += stream.feed(output[at:at + step])
        at += step
    deltas += stream.finish()
    return accumulate(deltas), kinds_of(stream.deviations)


def kinds_of(deviations: Iterable[Deviation]) -> tuple[str, ...]:
    """The kinds of the deviations a parse reported, sorted."""
    return tuple(sorted(str(d.kind) for d in deviations))


# --- where things are in a rendered output --------------------------------------------------

def call_start(analysis: Analysis, output: str) -> int:
    """Return where the first call's markup begins in a rendered output (-1: not found).

    It is the earliest opening marker in front of the first function name: the last
    occurrence of each (a content wrapper may use the same token before it)."""
    tools = analysis.tools
    fmt = tools.format
    name_at = output.find("get_weather")
    markers = [fmt.section_start.strip(), fmt.per_call_start.strip(),
               tools.function.name_prefix.strip()]
    if fmt.mode == ToolFormat.JSON_NATIVE:
        markers.append("[" if fmt.tools_array_wrapped else "{")
    found = [output.rfind(m, 0, name_at) for m in markers if m]
    return min((at for at in found if at >= 0), default=name_at)


def reasoning_opened_by_prompt(rendered: Rendered, analysis: Analysis) -> bool:
    """Tell whether the generation prompt leaves the output inside reasoning."""
    start, end = analysis.reasoning.start.strip(), analysis.reasoning.end.strip()
    tail = rendered.prompt.tail
    return bool(start) and start in tail and end not in tail[tail.rfind(start):]


def perturb(base: Base | None, output: str | None,
            expected: Message | None = None) -> Perturbed | None:
    """Make a case from a base and the edited output (None when either is missing)."""
    if base is None or output is None or output == base.rendered.output:
        return None
    return Perturbed(base, output, base.expected if expected is None else expected)


def cut(text: str, piece: str, last: bool = False) -> str | None:
    """Remove one occurrence of piece from text (None when absent)."""
    at = text.rfind(piece) if last else text.find(piece)
    return None if not piece or at < 0 else text[:at] + text[at + len(piece):]


# --- the perturbations ------------------------------------------------------------------------

def exact_rendering(ctx: Context) -> Perturbed | None:
    """The control: the template's own rendering of a call, which has no deviation."""
    base = ctx.bases.get("call")
    return Perturbed(base, base.rendered.output, base.expected) if base else None


def repeated_reasoning_start(ctx: Context) -> Perturbed | None:
    """The reasoning opener written again at the start (the prompt opened it, or doubled)."""
    base = ctx.bases.get("reasoning") or ctx.bases.get("reasoning-call")
    start = ctx.subject.analysis.reasoning.start.strip()
    if base is None or not start:
        return None
    output = base.rendered.output
    opened = reasoning_opened_by_prompt(base.rendered, ctx.subject.analysis)
    if not opened and not output.lstrip().startswith(start):
        return None
    return perturb(base, f"{start}\n{output}")


def reasoning_label_missing(ctx: Context) -> Perturbed | None:
    """A reasoning opener rendered as a special token plus a fixed label, the label left out."""
    base = ctx.bases.get("reasoning") or ctx.bases.get("reasoning-call")
    start = ctx.subject.analysis.reasoning.start
    found = LABELLED_OPENER.fullmatch(start.strip())
    if base is None or found is None or start.strip() not in base.rendered.output:
        return None
    return perturb(base, base.rendered.output.replace(start.strip(), found.group(1), 1))


def unclosed_reasoning(ctx: Context) -> Perturbed | None:
    """A tool call starts inside reasoning that is never closed."""
    base = ctx.bases.get("reasoning-call")
    end = ctx.subject.analysis.reasoning.end.strip()
    if base is None or not end or base.expected.content:
        return None
    return perturb(base, cut(base.rendered.output, end))


def content_around_reasoning(ctx: Context) -> Perturbed | None:
    """Content, then a reasoning block, then content: the text after the block is kept."""
    base = ctx.bases.get("reasoning")
    reasoning = ctx.subject.analysis.reasoning
    start, end = reasoning.start.strip(), reasoning.end.strip()
    if base is None or not start or not end or not base.rendered.output.startswith(start):
        return None
    after = base.rendered.output.split(end, 1)[1] if end in base.rendered.output else None
    if after is None:
        return None
    expected = replace(base.expected, content=CONTENT_BEFORE + without_markup(ctx, after))
    return perturb(base, CONTENT_BEFORE + base.rendered.output, expected)


def without_markup(ctx: Context, text: str) -> str:
    """Remove the answer's markup (the header after the reasoning end, content wrappers, turn
    markers) from text: what is left is the answer's text, verbatim."""
    analysis = ctx.subject.analysis
    content = analysis.content
    for marker in (analysis.reasoning.after_end, content.start, content.end, content.turn_start,
                   content.turn_end):
        text = text.replace(marker.strip(), "") if marker.strip() else text
    return text


def wrapped_calls(ctx: Context, opening: str, closing: str) -> Perturbed | None:
    """The calls wrapped in a pair the template does not render.

    Not for dedicated handlers: their calls are messages whose header the generation prompt
    has already opened, so a wrapper could only sit inside a header."""
    base = ctx.bases.get("call")
    if base is None or opening.strip() in base.rendered.output \
            or ctx.subject.analysis.handler != "auto":
        return None
    output = base.rendered.output
    at = call_start(ctx.subject.analysis, output)
    if at < 0:
        return None
    return perturb(base, f"{output[:at]}{opening}{output[at:].rstrip()}{closing}")


def call_fence(ctx: Context) -> Perturbed | None:
    """The calls in a markdown code fence."""
    return wrapped_calls(ctx, "```json\n", "\n```")


def call_wrapper_tokens(ctx: Context) -> Perturbed | None:
    """The calls in a `<tool_call>` token pair the template does not render."""
    return wrapped_calls(ctx, "<tool_call>\n", "\n</tool_call>")


def separated_json_calls(ctx: Context, separator: str) -> Perturbed | None:
    """Two JSON call objects side by side, separated by `separator` instead of what the
    template writes between them (its separator, and any per-call markers)."""
    fmt = ctx.subject.analysis.tools.format
    base = ctx.bases.get("parallel-calls")
    if base is None or fmt.mode != ToolFormat.JSON_NATIVE or fmt.tools_array_wrapped \
            or fmt.uses_python_dicts:
        return None
    output = base.rendered.output
    found = first_call_object(ctx, output)
    if found is None:
        return None
    _, _, end = found
    following = output.find("{", end)
    between = output[end:following]
    for marker in (fmt.per_call_end, fmt.call_separator, fmt.per_call_start):
        between = between.replace(marker.strip(), "", 1) if marker.strip() else between
    if following < 0 or between.strip() or output[end:following] == separator:
        return None
    return perturb(base, output[:end] + separator + output[following:])


def first_call_object(ctx: Context, output: str) -> tuple[object, int, int] | None:
    """The first JSON value from the first `{` of the calls on: (value, start, end)."""
    at = output.find("{", max(call_start(ctx.subject.analysis, output), 0))
    try:
        value, end = json.JSONDecoder().raw_decode(output, at)
    except ValueError:
        return None
    return value, at, end


def semicolon_separated(ctx: Context) -> Perturbed | None:
    """JSON call objects separated by `;`."""
    return separated_json_calls(ctx, "; ")


def newline_separated(ctx: Context) -> Perturbed | None:
    """JSON call objects separated by a newline."""
    return separated_json_calls(ctx, "\n")


def arguments_key(ctx: Context) -> Perturbed | None:
    """The arguments under `parameters` instead of `arguments` (or the reverse)."""
    fmt = ctx.subject.analysis.tools.format
    base = ctx.bases.get("call")
    if base is None or fmt.mode != ToolFormat.JSON_NATIVE or fmt.fun_name_is_key:
        return None
    key = fmt.args_field.split(".")[-1]
    other = "parameters" if key == "arguments" else "arguments"
    quote = "'" if fmt.uses_python_dicts else '"'
    output = base.rendered.output
    if f"{quote}{other}{quote}" in output:
        return None
    return perturb(base, output.replace(f"{quote}{key}{quote}", f"{quote}{other}{quote}", 1))


def extra_json_member(ctx: Context) -> Perturbed | None:
    """A JSON call object with a member the template does not write, OpenAI's `"type":
    "function"` first: its text dropped and noted, the call read as written."""
    fmt = ctx.subject.analysis.tools.format
    base = ctx.bases.get("call")
    if base is None or fmt.mode != ToolFormat.JSON_NATIVE or fmt.fun_name_is_key:
        return None
    quote = "'" if fmt.uses_python_dicts else '"'
    output = base.rendered.output
    name = output.find(f"{quote}{fmt.name_field.split('.')[-1]}{quote}")
    opener = output.rfind("{", 0, name) + 1  # the object holding the name member
    if name < 0 or not opener or f"{quote}type{quote}" in output:
        return None
    member = f"{quote}type{quote}: {quote}function{quote}, "
    return perturb(base, output[:opener] + member + output[opener:])


def missing_control_token(ctx: Context) -> Perturbed | None:
    """The marker between the function name and its JSON arguments left out."""
    tools = ctx.subject.analysis.tools
    base = ctx.bases.get("call")
    suffix = tools.function.name_suffix.strip() or tools.arguments.start.strip()
    if base is None or tools.format.mode != ToolFormat.TAG_WITH_JSON or not is_marker(suffix):
        return None
    output = base.rendered.output
    at = output.find("get_weather")
    return perturb(base, output[:at] + (cut(output[at:], suffix) or output[at:]))


def json_body(ctx: Context) -> Perturbed | None:
    """A JSON call body inside the call wrapper of a template that renders tagged calls."""
    analysis = ctx.subject.analysis
    fmt = analysis.tools.format
    base = ctx.bases.get("call")
    if base is None or fmt.mode != ToolFormat.TAG_WITH_TAGGED:
        return None
    opening, closing = fmt.section_start.strip(), fmt.section_end.strip()
    if is_python_call_list(analysis):
        opening, closing = opening.removesuffix("["), closing.removeprefix("]")
        body = f"[{JSON_CALL}]"
    else:
        body = JSON_CALL
    if not opening:  # no section: the body goes in the per-call wrapper
        opening, closing = fmt.per_call_start.strip(), fmt.per_call_end.strip()
    output = base.rendered.output
    at = call_start(analysis, output)
    if not marker_like(opening) or at < 0:
        return None
    return perturb(base, f"{output[:at]}{opening}{body}{closing}")


def trailing_eos(ctx: Context) -> Perturbed | None:
    """The tokenizer's end-of-sequence text at the very end of the output."""
    base = ctx.bases.get("call")
    named = [t for t in KNOWN_EOS if t in ctx.source.source]
    eos = ctx.source.eos_token or (named[0] if named else "</s>")
    return perturb(base, base.rendered.output + eos) if base else None


def missing_namespace(ctx: Context) -> Perturbed | None:
    """The namespace prefix of a call header left out (`name:0` for `functions.name:0`)."""
    base = ctx.bases.get("call")
    found = re.search(r"([A-Za-z_]\w*\.)$", ctx.subject.analysis.tools.function.name_prefix)
    if base is None or found is None:
        return None
    return perturb(base, base.rendered.output.replace(found.group(1) + "get_weather",
                                                      "get_weather", 1))


def parameter_closing(analysis: Analysis) -> str:
    """The closing tag of a tagged string value (empty when values are not closed by a tag)."""
    args = analysis.tools.arguments
    suffix = args.value_suffix.strip()
    if analysis.tools.format.mode != ToolFormat.TAG_WITH_TAGGED or not suffix.startswith("</"):
        return ""
    return suffix + "query" + args.echo_suffix.strip() if args.suffix_echoes_name else suffix


def missing_parameter_close(ctx: Context) -> Perturbed | None:
    """A parameter's closing tag left out: it closes at the next parameter's opening tag."""
    base = ctx.bases.get("call-two-args")
    closing = parameter_closing(ctx.subject.analysis)
    if base is None or not closing:
        return None
    output = base.rendered.output
    at = output.find("hotels")
    return perturb(base, output[:at] + (cut(output[at:], closing) or output[at:]))


def missing_call_close(ctx: Context) -> Perturbed | None:
    """The closing tag of a call (`</function>`, `</tool_call>`) left out at the end."""
    tools = ctx.subject.analysis.tools
    base = ctx.bases.get("call")
    closings = [tools.function.close.strip(), tools.format.per_call_end.strip()]
    closing = next((c for c in closings if c.startswith("</")), "")
    if base is None or not closing:
        return None
    return perturb(base, cut(base.rendered.output, closing, last=True))


def python_spelling(ctx: Context) -> Perturbed | None:
    """A Python call list spelled another valid way: the other quotes, the other spacing
    after commas. Python reads both the same, so this is no deviation at all."""
    base = ctx.bases.get("call-two-args")
    if base is None or not is_python_call_list(ctx.subject.analysis):
        return None
    output = base.rendered.output
    at = call_start(ctx.subject.analysis, output)
    call_text = output[at:]
    if "'hotels'" in call_text:
        call_text = re.sub(r"'(hotels|Paris)'", r'"\1"', call_text)
    else:
        call_text = re.sub(r'"(hotels|Paris)"', r"'\1'", call_text)
    spaced = ", " in call_text
    call_text = call_text.replace(", ", ",") if spaced else call_text.replace(",", ", ")
    return perturb(base, output[:at] + call_text)


def undeclared_function(ctx: Context) -> Perturbed | None:
    """A call of a function the request does not declare: it stays content, verbatim."""
    base = ctx.bases.get("call")
    if base is None or base.rendered.output.count("get_weather") != 1:
        return None
    at = call_start(ctx.subject.analysis, base.rendered.output)
    output = base.rendered.output.replace("get_weather", UNDECLARED_NAME)
    return perturb(base, output, Message(content=output[at:]))


def tool_syntax_in_closed_reasoning(ctx: Context) -> Perturbed | None:
    """A call quoted inside reasoning that is closed: it stays reasoning.

    Not for dedicated handlers: their messages end at tokens a quote cannot hold."""
    base, called = ctx.bases.get("reasoning"), ctx.bases.get("call")
    end = ctx.subject.analysis.reasoning.end.strip()
    if base is None or called is None or not end or ctx.subject.analysis.handler != "auto":
        return None
    call_text = called.rendered.output[call_start(ctx.subject.analysis,
                                                  called.rendered.output):].strip()
    output = base.rendered.output
    at = output.find(REASONING)
    if at < 0 or end not in output[at:] or not call_text:
        return None
    quoted = f"{REASONING}\n{call_text}"
    expected = replace(base.expected, reasoning_content=quoted)
    return perturb(base, output.replace(REASONING, quoted, 1), expected)


def exact_base(name: str) -> Build:
    """The control on another base: its own rendering, parsed one-shot and streamed."""
    def build(ctx: Context) -> Perturbed | None:
        base = ctx.bases.get(name)
        return Perturbed(base, base.rendered.output, base.expected) if base else None
    return build


def content_before_call(ctx: Context) -> Perturbed | None:
    """Content written before a call, for templates that render none with calls: the text
    goes where the call's markup begins (after any reasoning the output closes)."""
    base = ctx.bases.get("call")
    if base is None or "content-call" in ctx.bases or ctx.subject.analysis.handler != "auto":
        return None
    output = base.rendered.output
    at = call_start(ctx.subject.analysis, output)
    if at < 0:
        return None
    expected = replace(base.expected, content=CONTENT_BEFORE.strip())
    return perturb(base, output[:at] + CONTENT_BEFORE + output[at:], expected)


def content_after_call(ctx: Context) -> Perturbed | None:
    """Text after the last call: it is content, kept."""
    base = ctx.bases.get("call")
    if base is None or ctx.subject.analysis.handler != "auto":
        return None
    expected = replace(base.expected, content=CONTENT_AFTER)
    return perturb(base, f"{base.rendered.output}\n{CONTENT_AFTER}", expected)


def call_markup(ctx: Context, base: Base) -> tuple[str, str]:
    """Split a rendered output into the text before its first call and the calls' markup."""
    output = base.rendered.output
    at = max(call_start(ctx.subject.analysis, output), 0)
    return output[:at], output[at:]


def compact_markers(ctx: Context) -> Perturbed | None:
    """The line breaks the template writes next to its markers left out (`<tool_call>{...`,
    `<parameter=x>Paris</parameter>`). A marker's own inner text (a header such as
    `<|message_sep|>\\n\\nfunction call<|role_sep|>`) is the template's literal and kept."""
    base = ctx.bases.get("parallel-calls") or ctx.bases.get("call-two-args")
    if base is None:
        return None
    before, calls = call_markup(ctx, base)
    tools = ctx.subject.analysis.tools
    literals = [m.strip() for m in (tools.format.section_start, tools.format.per_call_start,
                                    tools.function.name_prefix, tools.arguments.start)
                if len(m.strip().split()) > 1]
    kept = [range(m.start(), m.end()) for literal in set(literals)
            for m in re.finditer(re.escape(literal), calls)]
    marker = f"(?:{MARKER_RE.pattern})"

    def squeeze(found: re.Match[str]) -> str:
        inside = any(found.start() in span for span in kept)
        return found.group() if inside else ""

    squeezed = re.sub(rf"(?<=[>\]])[ \t]*\n\s*|\n\s*(?={marker})", squeeze, calls)
    return perturb(base, before + squeezed)


def spaced_markers(ctx: Context) -> Perturbed | None:
    """Blank lines and spaces around the calls: before the first, between two, after the last."""
    base = ctx.bases.get("parallel-calls") or ctx.bases.get("call")
    if base is None or ctx.subject.analysis.handler != "auto":
        return None
    fmt = ctx.subject.analysis.tools.format
    before, calls = call_markup(ctx, base)
    end = fmt.per_call_end.strip()
    if end and marker_like(end) and calls.count(end) > 1:
        calls = calls.replace(end, end + "\n\n ", calls.count(end) - 1)
    return perturb(base, f"{before}\n\n{calls}\n\n")


def json_arguments(ctx: Context, base_name: str, pattern: str
                   ) -> tuple[Base, re.Match[str]] | None:
    """The base's JSON arguments object as rendered (JSON call formats only)."""
    fmt = ctx.subject.analysis.tools.format
    base = ctx.bases.get(base_name)
    if base is None or fmt.mode not in (ToolFormat.JSON_NATIVE, ToolFormat.TAG_WITH_JSON) \
            or fmt.uses_python_dicts:
        return None
    found = re.search(pattern, base.rendered.output)
    return None if found is None else (base, found)


def rewritten(base: Base, found: re.Match[str], text: str) -> Perturbed | None:
    """The base's output with the found text replaced."""
    output = base.rendered.output
    return perturb(base, output[:found.start()] + text + output[found.end():])


def arguments_json_string(ctx: Context) -> Perturbed | None:
    """JSON arguments written as a JSON string holding the object (`"{\\"location\\": ...}"`)."""
    found = json_arguments(ctx, "call", r'\{\s*"location"\s*:\s*"Paris"\s*\}')
    return None if found is None else rewritten(*found, json.dumps(found[1].group()))


def cut_off_in_call(ctx: Context) -> Perturbed | None:
    """The output cut off (max tokens) right after the last argument's value: the call is
    kept with the value read. JSON or Python arguments break off (`malformed_call`, the
    arguments healed); a tagged value is complete text, so each closing the template writes
    after it is left out (`missing_close` for each: value, function, call, section)."""
    analysis = ctx.subject.analysis
    base = ctx.bases.get("call")
    if base is None:
        return None
    output = base.rendered.output
    at = output.find("Paris", max(call_start(analysis, output), 0))
    if at < 0:
        return None
    tools = analysis.tools
    kinds: tuple[DeviationKind, ...] = (K.MALFORMED_CALL,)
    if tools.format.mode == ToolFormat.TAG_WITH_TAGGED and not is_python_call_list(analysis):
        closings = (tools.arguments.value_suffix, tools.function.close,
                    tools.format.per_call_end, tools.format.section_end)
        # One for each closing tag (a closing may hold several: `</invoke>\n</calls>`).
        kinds = (K.MISSING_CLOSE,) * sum(max(c.count("</"), 1) for c in closings if c.strip())
    cut_off = perturb(base, output[:at + len("Paris")])
    return replace(cut_off, deviations=kinds) if cut_off else None


def pretty_json_arguments(ctx: Context) -> Perturbed | None:
    """JSON arguments pretty-printed over several lines (`{\\n  "query": "hotels", ...`)."""
    found = json_arguments(ctx, "call-two-args",
                           r'\{\s*"query"\s*:\s*"hotels"\s*,\s*"city"\s*:\s*"Paris"\s*\}')
    if found is None:
        return None
    return rewritten(*found, json.dumps(json.loads(found[1].group()), indent=2))


def json_member_order(ctx: Context) -> Perturbed | None:
    """A JSON call object with its members the other way round (arguments before the name)."""
    fmt = ctx.subject.analysis.tools.format
    base = ctx.bases.get("call")
    if base is None or fmt.mode != ToolFormat.JSON_NATIVE or fmt.fun_name_is_key \
            or fmt.uses_python_dicts or fmt.function_field or fmt.id_field:
        return None
    output = base.rendered.output
    found = first_call_object(ctx, output)
    if found is None:
        return None
    value, at, end = found
    if not isinstance(value, dict) or len(value) != 2:
        return None
    swapped = json.dumps(dict(reversed(list(value.items()))), ensure_ascii=False)
    return perturb(base, output[:at] + swapped + output[end:])


def cut_off_in_second_call(ctx: Context) -> Perturbed | None:
    """Parallel calls cut off inside the first string value of the second call: the first
    call whole, the second kept with the arguments written before the cut, the break noted
    as for one call."""
    base = ctx.bases.get("parallel-calls")
    single = cut_off_in_call(ctx)
    if base is None or single is None or len(base.expected.tool_calls) != 2:
        return None
    output = base.rendered.output
    second = output.find("search_records")
    at = output.find("hotels", second)
    if second < 0 or at < 0:
        return None
    written = output[second:at]
    first, call_two = base.expected.tool_calls
    arguments = {k: v for k, v in json.loads(call_two.arguments).items()
                 if k == "query" or re.search(rf"\b{k}\b", written)}
    expected = replace(base.expected, tool_calls=(
        first, replace(call_two, arguments=json.dumps(arguments, ensure_ascii=False))))
    cut_off = perturb(base, output[:at + len("hotels")], expected)
    return replace(cut_off, deviations=single.deviations) if cut_off else None


def cut_off_after_number(ctx: Context) -> Perturbed | None:
    """Parallel calls cut off right after the second call's last value, a number (`5`): the
    output is finished, so the number is whole and kept (not healed to null), the first call
    whole. JSON arguments break off (`malformed_call`); a tagged or Python value that is
    whole leaves only the closings after it out: one `missing_close` for each closing the
    template writes there (a Python call list notes its call's `)`)."""
    analysis = ctx.subject.analysis
    base = ctx.bases.get("parallel-calls")
    single = cut_off_in_call(ctx)
    if base is None or single is None or len(base.expected.tool_calls) != 2:
        return None
    output = base.rendered.output
    second = output.find("search_records")
    at = output.find("5", output.find("limit", second))
    if second < 0 or at < 0 or "hotels" not in output[second:at]:
        return None  # the number is not the call's last value
    kinds: tuple[DeviationKind, ...] = (K.MALFORMED_CALL,)
    if is_python_call_list(analysis):
        kinds = (K.MISSING_CLOSE,)
    elif analysis.tools.format.mode == ToolFormat.TAG_WITH_TAGGED:
        tools, rest = analysis.tools, output[at + 1:].lstrip()
        value_end = (tools.arguments.typed_value_suffix or tools.arguments.value_suffix).strip()
        closings = (value_end if rest.startswith(value_end) else "", tools.function.close,
                    tools.format.per_call_end, tools.format.section_end)
        kinds = (K.MISSING_CLOSE,) * sum(max(c.count("</"), 1) for c in closings if c.strip())
    cut_off = perturb(base, output[:at + 1])
    return replace(cut_off, deviations=kinds) if cut_off else None


def reasoning_only(ctx: Context) -> Perturbed | None:
    """A reasoning block closed, and nothing after it."""
    base = ctx.bases.get("reasoning")
    end = ctx.subject.analysis.reasoning.end.strip()
    if base is None or not end:
        return None
    output = base.rendered.output
    at = output.find(end, max(output.find(REASONING), 0))
    if at < 0:
        return None
    return perturb(base, output[:at + len(end)], replace(base.expected, content=""))


PERTURBATIONS: tuple[Perturbation, ...] = (
    Perturbation("exact-rendering", (), exact_rendering),
    Perturbation("repeated-reasoning-start", (K.REPEATED_REASONING_START,),
                 repeated_reasoning_start),
    Perturbation("reasoning-label-missing", (K.REASONING_LABEL_MISSING,),
                 reasoning_label_missing),
    Perturbation("unclosed-reasoning", (K.UNCLOSED_REASONING,), unclosed_reasoning),
    Perturbation("content-around-reasoning", (K.CONTENT_AROUND_REASONING,),
                 content_around_reasoning),
    Perturbation("call-fence", (K.CALL_WRAPPER,), call_fence),
    Perturbation("call-wrapper-tokens", (K.CALL_WRAPPER,), call_wrapper_tokens),
    Perturbation("calls-semicolon-separated", (K.CALL_SEPARATOR,), semicolon_separated),
    Perturbation("calls-newline-separated", (K.CALL_SEPARATOR,), newline_separated),
    Perturbation("missing-control-token", (K.MISSING_CONTROL_TOKEN,), missing_control_token),
    Perturbation("arguments-key", (K.ARGUMENTS_KEY,), arguments_key),
    Perturbation("json-body", (K.JSON_BODY,), json_body),
    Perturbation("trailing-eos", (K.TRAILING_EOS,), trailing_eos),
    Perturbation("missing-namespace", (K.MISSING_NAMESPACE,), missing_namespace),
    Perturbation("missing-parameter-close", (K.MISSING_CLOSE,), missing_parameter_close),
    Perturbation("missing-call-close", (K.MISSING_CLOSE,), missing_call_close),
    Perturbation("python-spelling", (), python_spelling),
    Perturbation("no-arguments", (), exact_base("call-no-args")),
    Perturbation("typed-arguments", (), exact_base("call-typed")),
    Perturbation("tricky-string", (), exact_base("call-tricky-string")),
    Perturbation("content-and-call", (), exact_base("content-call")),
    Perturbation("content-before-call", (), content_before_call),
    Perturbation("content-after-call", (), content_after_call),
    Perturbation("compact-markers", (), compact_markers),
    Perturbation("spaced-markers", (), spaced_markers),
    Perturbation("arguments-json-string", (K.ARGUMENTS_NOT_OBJECT,), arguments_json_string),
    Perturbation("cut-off-in-call", (K.MALFORMED_CALL,), cut_off_in_call),
    Perturbation("reasoning-only", (), reasoning_only),
    Perturbation("pretty-json-arguments", (), pretty_json_arguments),
    Perturbation("json-member-order", (), json_member_order),
    Perturbation("extra-json-member", (K.UNKNOWN_MEMBER,), extra_json_member),
    Perturbation("cut-off-in-second-call", (K.MALFORMED_CALL,), cut_off_in_second_call),
    Perturbation("cut-off-after-number", (K.MALFORMED_CALL,), cut_off_after_number),
    Perturbation("undeclared-function", (K.UNKNOWN_FUNCTION,), undeclared_function,
                 accepted=False),
    Perturbation("tool-syntax-in-closed-reasoning", (), tool_syntax_in_closed_reasoning,
                 accepted=False),
)


# --- the table --------------------------------------------------------------------------------

@dataclass(frozen=True)
class KindCount:
    """Counts of one perturbation over one or more templates."""

    perturbation: str
    passed: int = 0
    message_right: int = 0  # the expected message, whatever the deviations said
    failed: int = 0
    whole_message_failed: int = 0
    skipped: int = 0


def case_table(results: Iterable[Robustness]) -> tuple[KindCount, ...]:
    """Count each perturbation's cases over the results, in the perturbations' order."""
    counts = {p.name: KindCount(p.name) for p in PERTURBATIONS}
    for case in (c for result in results for c in result.cases):
        old = counts[case.perturbation]
        counts[case.perturbation] = replace(
            old, passed=old.passed + (case.outcome == Outcome.PASS),
            message_right=old.message_right + message_right(case),
            failed=old.failed + (case.outcome == Outcome.FAIL),
            whole_message_failed=old.whole_message_failed + case.whole_message_failed,
            skipped=old.skipped + (case.outcome == Outcome.SKIP))
    return tuple(counts.values())


def message_right(case: RobustnessCase) -> bool:
    """Tell whether an applicable case gave the expected message (deviations aside)."""
    return case.outcome != Outcome.SKIP and \
        all(d.startswith("deviations:") for d in case.differences)


def pass_rate(results: Iterable[Robustness]) -> tuple[int, int]:
    """Return (passed, applicable) over every case of the results."""
    cases = [c for result in results for c in result.checked]
    return sum(c.outcome == Outcome.PASS for c in cases), len(cases)

