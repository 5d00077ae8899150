"""Grammar rules for the tool-call section of an output, in the template's own format.

Markers keep their inner text exactly and may have whitespace around them: the analysis
trims markers, and a model that spaces calls a little differently still fits. Tagged
arguments (one marker pair per argument) are built in `analyzer.gbnf.tagged_args`.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from analyzer.gbnf.builder import GrammarBuilder, alt, chars, literal, opt, seq, star
from analyzer.gbnf.json_schema import SchemaConverter
from analyzer.gbnf.markers import spaced_marker
from analyzer.gbnf.tagged_args import TaggedArguments
from analyzer.gbnf.tool_specs import ToolSpec
from analyzer.gbnf.until import text_excluding
from analyzer.model import CallIdPosition, ToolFormat, ToolsAnalysis

CALL_ID_CHARS = "[A-Za-z0-9_.:-]+"
CALL_INDEX = "[0-9]{1,6}"


class CallGrammar:
    """Build the rules for tool calls as one analysed template renders them."""

    def __init__(self, builder: GrammarBuilder, tools: ToolsAnalysis) -> None:
        self.builder = builder
        self.tools = tools
        self.json = SchemaConverter(builder, python_dicts=tools.format.uses_python_dicts)
        self.ws = self.json.space()
        self.tagged = TaggedArguments(builder, tools, self.ws)

    def marker(self, text: str, *, lead: bool = True, trail: bool = True) -> str:
        """Match a marker's text exactly, with optional whitespace around it."""
        return spaced_marker(self.ws, text, lead=lead, trail=trail)

    # -- the whole section -----------------------------------------------------------------

    def section(self, specs: Sequence[ToolSpec], *, parallel: bool) -> str:
        """Return a rule for all calls of one output: section markers around one or more calls."""
        fmt = self.tools.format
        one = self.builder.add("call", alt(*(self.call(spec) for spec in specs)))
        wrapped = seq(self.marker(fmt.per_call_start), one, self.marker(fmt.per_call_end))
        if fmt.per_call_start or fmt.per_call_end:
            wrapped = self.builder.add("wrapped-call", wrapped)
        array = fmt.mode == ToolFormat.JSON_NATIVE and fmt.tools_array_wrapped
        between = self._call_separator(array)
        calls = seq(wrapped, star(seq(between, wrapped))) if parallel else wrapped
        if array:
            calls = seq(literal("["), self.ws, calls, self.ws, literal("]"))
        body = seq(self.marker(fmt.section_start), calls, self.marker(fmt.section_end))
        return self.builder.add("tool-calls", body)

    def _call_separator(self, array: bool) -> str:
        separator = self.tools.format.call_separator
        if separator.strip():
            return self.marker(separator)
        return self.json.separator() if array else self.ws

    def call(self, spec: ToolSpec) -> str:
        """Return the rule for one call of this function, without per-call markers."""
        mode = self.tools.format.mode
        if mode == ToolFormat.JSON_NATIVE:
            body = self._json_native_call(spec)
        else:
            args = self.tagged.arguments(spec) if mode == ToolFormat.TAG_WITH_TAGGED else \
                self.json.value(spec.parameters, f"{spec.name}-args")
            body = self._tag_call(spec, args)
        return self.builder.add(f"call-{spec.name}", body)

    # -- JSON_NATIVE -----------------------------------------------------------------------

    def _json_native_call(self, spec: ToolSpec) -> str:
        fmt = self.tools.format
        args = self.json.value(spec.parameters, f"{spec.name}-args")
        if fmt.fun_name_is_key:
            return self._json_object([self._member(spec.name, args)], [])
        name_path, args_path = self._field_paths()
        name = self.json.const(spec.name)
        if len(name_path) < 2 or len(args_path) < 2 or name_path[0] != args_path[0]:
            required = [self._member(name_path[0], name), self._member(args_path[0], args)]
            return self._json_object(required, self._optional_members())
        inner = self._json_object([self._member(name_path[1], name),
                                   self._member(args_path[1], args)], [])
        outer_type = self._member("type", self.json.const("function"))
        return self._json_object([self._member(name_path[0], inner)],
                                 self._optional_members() + [outer_type])

    def _field_paths(self) -> tuple[list[str], list[str]]:
        fmt = self.tools.format
        name_path, args_path = fmt.name_field.split("."), fmt.args_field.split(".")
        if fmt.function_field and len(name_path) == 1:
            name_path, args_path = [fmt.function_field, *name_path], [fmt.function_field,
                                                                       *args_path]
        return name_path[:2], args_path[:2]

    def _optional_members(self) -> list[str]:
        fmt = self.tools.format
        members = []
        if fmt.id_field:
            members.append(self._member(fmt.id_field, self.json.string()))
        if fmt.gen_id_field:
            value = alt(self.json.string(), self.json.integer())
            members.append(self._member(fmt.gen_id_field, value))
        return members

    def _member(self, key: str, value: str) -> str:
        return seq(self.json.const(key), self.json.space(), literal(":"), self.json.space(),
                   value)

    def _json_object(self, required: list[str], optional: list[str]) -> str:
        """'{...}' holding each required member once, in any order, optional ones anywhere."""
        sep = self.json.separator()
        extra = star(seq(sep, alt(*optional))) if optional else ""
        lead = star(seq(alt(*optional), sep)) if optional else ""
        orders = itertools.permutations(required) if len(required) <= 3 else [required]
        chains = [seq(lead, *[seq(sep if i else "", m, extra) for i, m in enumerate(order)])
                  for order in orders]
        return seq(literal("{"), self.ws, alt(*chains), self.ws, literal("}"))

    # -- tag formats -----------------------------------------------------------------------

    def _tag_call(self, spec: ToolSpec, args: str) -> str:
        function, arguments = self.tools.function, self.tools.arguments
        before, between, after = self._call_id_parts()
        return seq(
            before,
            self.marker(function.name_prefix, trail=False),
            chars(spec.name),
            self._call_index(),
            self.marker(function.name_suffix),
            between,
            self.ws,
            self.marker(arguments.start),
            args,
            self.marker(arguments.end),
            after,
            self.ws,
            self.marker(function.close),
        )

    def _call_index(self) -> str:
        index = self.tools.call_index
        if not index.present:
            return ""
        return seq(self.marker(index.prefix, lead=False, trail=False), CALL_INDEX,
                   self.marker(index.suffix, lead=False))

    def _call_id_parts(self) -> tuple[str, str, str]:
        """The call-id rule placed before the name, after the name, or after the arguments."""
        call_id = self.tools.call_id
        end = call_id.suffix.strip() or self._call_id_end(call_id.pos)
        if call_id.pos == CallIdPosition.NONE or not (call_id.prefix.strip() or end):
            return "", "", ""
        value = text_excluding(self.builder, [end], "call-id") if end else CALL_ID_CHARS
        if not end:
            self.builder.spell_everything = True  # the id's class may read what follows
        shown = seq(self.marker(call_id.prefix), value)
        if call_id.pos != CallIdPosition.BETWEEN_FUNC_AND_ARGS:
            part = opt(seq(shown, self.marker(call_id.suffix)))
            return (part, "", "") if call_id.pos == CallIdPosition.PRE_FUNC_NAME else ("", "", part)
        # The suffix often doubles as the start of the arguments: keep it even without an id.
        if call_id.suffix.strip() in ("", self.tools.arguments.start.strip()):
            return "", opt(shown), ""
        return "", seq(opt(shown), self.marker(call_id.suffix)), ""

    def _call_id_end(self, pos: CallIdPosition) -> str:
        """The marker that follows an id written without a suffix of its own."""
        function, fmt = self.tools.function, self.tools.format
        followers = {
            CallIdPosition.PRE_FUNC_NAME: (function.name_prefix,),
            CallIdPosition.BETWEEN_FUNC_AND_ARGS: (self.tools.arguments.start,),
            CallIdPosition.POST_ARGS: (function.close, fmt.per_call_end, fmt.section_end),
        }.get(pos, ())
        return next((m.strip() for m in followers if m.strip()), "")
