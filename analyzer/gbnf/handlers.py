"""Grammars for the dedicated handlers' formats (see `analyzer.handlers`).

These formats are recipient-routed: an output is a run of messages, each a header saying
where its body goes, then the body. A call is a message addressed to a function; before it
the model may write messages to itself (GPT-OSS's analysis channel, Muse's `to=self`,
Functionary's text for `all`). A grammar that requires a call accepts those first; a lazy
grammar starts at the header of a call. Like the handlers, each layout is written down
here: the template's renders do not reveal it.
"""

from __future__ import annotations

from collections.abc import Sequence

from analyzer.gbnf.builder import alt, chars, opt, seq, star
from analyzer.gbnf.result import Trigger, TriggerKind
from analyzer.gbnf.tagged_args import TaggedArguments
from analyzer.gbnf.tool_calls import CallGrammar
from analyzer.gbnf.tool_specs import ToolSpec
from analyzer.gbnf.triggers import regex_escape
from analyzer.gbnf.until import text_excluding
from analyzer.model import ArgumentsAnalysis, ToolsAnalysis


class RoutedGrammar:
    """Rules shared by the routed formats; subclasses say how a call message reads."""

    message_start = ""  # opens every message after the first (the prompt opens the first)
    note_headers: tuple[str, ...] = ()  # headers of messages a model writes before a call
    note_end = ""  # what ends such a message ("" when the next message start does)
    call_end = ""  # what may end a call message (an end-of-generation token: optional)
    stops: tuple[str, ...] = ()  # what a note's text never contains
    tokens: tuple[str, ...] = ()  # markup tokens to keep whole

    def __init__(self, calls: CallGrammar) -> None:
        self.calls = calls
        self.builder = calls.builder
        self.ws = calls.ws

    def call(self, spec: ToolSpec, *, from_trigger: bool = False) -> str:
        """One call message (from its trigger on when from_trigger)."""
        raise NotImplementedError

    def triggers(self, specs: Sequence[ToolSpec]) -> tuple[Trigger, ...]:
        """What switches a lazy grammar on: the start of a call message's header."""
        raise NotImplementedError

    def json_args(self, spec: ToolSpec) -> str:
        return self.calls.json.value(spec.parameters, f"{spec.name}-args")

    def note(self) -> str:
        """A message before the calls: a note header, text, and its end."""
        text = text_excluding(self.builder, self.stops, "note")
        header = alt(*(chars(h) for h in self.note_headers))
        return self.builder.add("note", seq(header, text, chars(self.note_end)))

    def notes(self) -> str:
        """Any number of notes, each followed by the next message's start."""
        return star(seq(self.note(), self.ws, chars(self.message_start), self.ws))

    def section(self, specs: Sequence[ToolSpec], *, parallel: bool, from_trigger: bool) -> str:
        """The calls: one, or (parallel) several messages with notes in between."""
        first = alt(*(self.call(spec, from_trigger=from_trigger) for spec in specs))
        end = opt(chars(self.call_end)) if self.call_end else ""
        if not parallel:
            return self.builder.add("tool-calls", seq(first, end))
        any_call = alt(*(self.call(spec) for spec in specs))
        more = star(seq(end, self.ws, chars(self.message_start), self.ws, self.notes(),
                        any_call))
        return self.builder.add("tool-calls", seq(first, more, end))

    def whole_output(self, specs: Sequence[ToolSpec], *, parallel: bool) -> str:
        """The root of a grammar that requires a call: notes first, then the calls."""
        calls = self.section(specs, parallel=parallel, from_trigger=False)
        return seq(self.ws, opt(chars(self.message_start)), self.ws, self.notes(), calls,
                   self.ws)

    def from_trigger(self, specs: Sequence[ToolSpec], *, parallel: bool) -> str:
        """The root of a lazy grammar: the calls from the first trigger on."""
        return seq(self.section(specs, parallel=parallel, from_trigger=True), self.ws)


class GptOssGrammar(RoutedGrammar):
    """GPT-OSS (harmony): `<|channel|>analysis<|message|>...<|end|>` notes, then
    ` to=functions.NAME<|channel|>commentary <|constrain|>json<|message|>{...}<|call|>`; the
    recipient may also follow the channel (`<|channel|>commentary to=functions.NAME ...`)."""

    message_start = "<|start|>assistant"
    note_headers = ("<|channel|>analysis<|message|>", "<|channel|>commentary<|message|>")
    note_end = "<|end|>"
    call_end = "<|call|>"
    stops = ("<|end|>", "<|start|>", "<|call|>", "<|return|>")
    tokens = ("<|start|>", "<|channel|>", "<|constrain|>", "<|message|>", "<|end|>",
              "<|call|>", "<|return|>")
    recipient = "to=functions."

    def channel(self) -> str:
        # Inline, not a rule of its own: llguidance would read a terminals-only rule as one
        # greedy token, which then cannot give `<|channel|>analysis` back to a note header.
        return seq(chars("<|channel|>"), alt(chars("commentary"), chars("analysis")))

    def call(self, spec: ToolSpec, *, from_trigger: bool = False) -> str:
        content_type = seq(self.ws, opt(chars("<|constrain|>")), opt(chars("json")))
        body = seq(self.ws, chars(self.recipient + spec.name), opt(self.channel()),
                   content_type, chars("<|message|>"), self.ws, self.json_args(spec), self.ws)
        if not from_trigger:
            body = seq(opt(self.channel()), body)
        return self.builder.add(f"call-{spec.name}", body)

    def triggers(self, specs: Sequence[ToolSpec]) -> tuple[Trigger, ...]:
        return (Trigger(TriggerKind.WORD, " " + self.recipient),)


class MuseGrammar(RoutedGrammar):
    """Muse Glimmer: ` to=self<|message|>...<|eom|>` notes (or a word to the user that ends
    with `<|eom|>`, not the turn's `<|eot|>`), then ` to=NAME<|message|>` and an ATEM block
    invoking NAME with one `<atem:parameter>` element per argument."""

    message_start = "<|start|>assistant"
    note_headers = (" to=self<|message|>", " to=user<|message|>")
    note_end = "<|eom|>"
    call_end = "<|eom|>"
    stops = ("<|eom|>", "<|eot|>", "<|start|>")
    tokens = ("<|start|>", "<|message|>", "<|eom|>", "<|eot|>", "<atem:function_calls>",
              "</atem:function_calls>", "</atem:invoke>", "</atem:parameter>")
    parameters = ToolsAnalysis(arguments=ArgumentsAnalysis(
        name_prefix='<atem:parameter name="', name_suffix='">',
        value_suffix="</atem:parameter>", typed_value_suffix="</atem:parameter>",
        separator="\n"))

    def __init__(self, calls: CallGrammar) -> None:
        super().__init__(calls)
        self.arguments = TaggedArguments(self.builder, self.parameters, self.ws)

    def call(self, spec: ToolSpec, *, from_trigger: bool = False) -> str:
        block = seq(chars("<atem:function_calls>"), self.ws,
                    chars(f'<atem:invoke name="{spec.name}">'), self.ws,
                    self.arguments.arguments(spec), self.ws, chars("</atem:invoke>"), self.ws,
                    chars("</atem:function_calls>"))
        body = seq(self.ws, chars(f"to={spec.name}"), self.ws, chars("<|message|>"), self.ws,
                   block, self.ws)
        return self.builder.add(f"call-{spec.name}", body)

    def triggers(self, specs: Sequence[ToolSpec]) -> tuple[Trigger, ...]:
        names = "|".join(regex_escape(spec.name) for spec in specs)
        return (Trigger(TriggerKind.PATTERN, rf"( to=(?:{names})<\|message\|>)"),)


class FunctionaryGrammar(RoutedGrammar):
    """Functionary v3.2: the prompt ends with `>>>`; `all\\nTEXT` notes, then `NAME\\n{...}`,
    messages joined by `>>>`."""

    message_start = ">>>"
    note_headers = ("all\n",)
    stops = (">>>", "<|eot_id|>")
    tokens = ("<|eot_id|>",)

    def call(self, spec: ToolSpec, *, from_trigger: bool = False) -> str:
        body = seq(chars(spec.name + "\n"), self.ws, self.json_args(spec), self.ws)
        return self.builder.add(f"call-{spec.name}", body)

    def triggers(self, specs: Sequence[ToolSpec]) -> tuple[Trigger, ...]:
        names = "|".join(regex_escape(spec.name) for spec in specs)
        return (Trigger(TriggerKind.PATTERN, rf"(?:^|>>>)((?:{names})\n)"),)


GRAMMARS: dict[str, type[RoutedGrammar]] = {
    "gpt-oss-channels": GptOssGrammar,
    "muse-atem-recipients": MuseGrammar,
    "functionary-v3.2-recipients": FunctionaryGrammar,
}


def routed_grammar(handler: str, calls: CallGrammar) -> RoutedGrammar | None:
    """Return the grammar of the named dedicated handler (None for "auto" or unknown)."""
    grammar = GRAMMARS.get(handler)
    return grammar(calls) if grammar is not None else None
