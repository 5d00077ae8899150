"""Grammar rules for the tool-call section of an output, in the template's own format.

Markers keep their inner text exactly and may have whitespace around them: the analysis
trims markers, and a model that spaces calls a little differently still fits.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from analyzer.gbnf.builder import GrammarBuilder, alt, chars, literal, opt, seq, star
from analyzer.gbnf.json_schema import SchemaConverter
from analyzer.gbnf.tool_specs import ToolSpec
from analyzer.gbnf.until import text_excluding
from analyzer.model import CallIdPosition, ToolFormat, ToolsAnalysis

CALL_ID_CHARS = "[A-Za-z0-9_.:-]+"
CALL_INDEX = "[0-9]{1,6}"


def may_be_string(schema: Any) -> bool:
    """Tell whether a value of this schema can be a string (so a template writes it raw)."""
    if not isinstance(schema, dict):
        return schema is True
    if "enum" in schema or "const" in schema:
        values = schema.get("enum", [schema.get("const")])
        return any(isinstance(v, str) for v in values)
    options = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(options, list):
        return any(may_be_string(o) for o in options)
    kind = schema.get("type")
    if isinstance(kind, list):
        return "string" in kind
    return kind == "string" or (kind is None and not _looks_structured(schema))


def _looks_structured(schema: dict[str, Any]) -> bool:
    keys = ("properties", "items", "prefixItems", "$ref", "allOf", "minimum", "maximum")
    return any(key in schema for key in keys)


class CallGrammar:
    """Build the rules for tool calls as one analysed template renders them."""

    def __init__(self, builder: GrammarBuilder, tools: ToolsAnalysis) -> None:
        self.builder = builder
        self.tools = tools
        self.json = SchemaConverter(builder, python_dicts=tools.format.uses_python_dicts)
        # Tagged values are written by str() or tojson depending on the template: accept both.
        self.loose = SchemaConverter(builder, python_dicts=True)
        self.ws = self.json.space()

    def marker(self, text: str, *, lead: bool = True, trail: bool = True) -> str:
        """Match a marker's text exactly, with optional whitespace around it.

        lead/trail False glue that edge to what comes next (a prefix to the name after it),
        unless the marker text itself has whitespace there.
        """
        core = text.strip()
        if not core:
            return self.ws if text else ""
        before = self.ws if lead or text[0].isspace() else ""
        after = self.ws if trail or text[-1].isspace() else ""
        return seq(before, chars(core), after)

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
            args = self._tagged_args(spec) if mode == ToolFormat.TAG_WITH_TAGGED else \
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

    # -- TAG_WITH_TAGGED arguments ---------------------------------------------------------

    def _tagged_args(self, spec: ToolSpec) -> str:
        """Each required argument once, optional ones anywhere in between.

        Templates write arguments in the call's own order, and some sort them, so required
        arguments may come in any order when there are at most three of them; beyond that,
        schema order or alphabetical order.
        """
        blocks = {key: self._tagged_arg(spec, key, schema)
                  for key, schema in spec.properties.items()}
        for key in spec.required:
            blocks.setdefault(key, self._tagged_arg(spec, key, True))
        required = [k for k in blocks if k in spec.required]
        optional = [blocks[k] for k in blocks if k not in spec.required]
        sep = self.marker(self.tools.arguments.separator) or self.ws
        any_optional = alt(*optional) if optional else ""
        if not required:
            return opt(seq(any_optional, star(seq(sep, any_optional)))) if optional else ""
        after = star(seq(sep, any_optional)) if optional else ""
        before = star(seq(any_optional, sep)) if optional else ""
        orders = itertools.permutations(required) if len(required) <= 3 else \
            [required, sorted(required)]
        chains = [seq(*[seq(sep if i else "", blocks[key], after) for i, key in enumerate(order)])
                  for order in orders]
        return seq(before, alt(*chains))

    def _tagged_arg(self, spec: ToolSpec, key: str, schema: Any) -> str:
        args = self.tools.arguments
        name = seq(self.marker(args.name_prefix, trail=False), chars(key),
                   self.marker(args.name_suffix, lead=False))
        if may_be_string(schema):
            value = seq(self.marker(args.value_prefix), self._raw_value(schema),
                        self.marker(args.value_suffix))
        else:
            typed = self.loose.value(schema, f"{spec.name}-{key}")
            value = seq(self.marker(args.typed_value_prefix), self.ws, typed, self.ws,
                        self.marker(args.typed_value_suffix))
        return self.builder.add(f"{spec.name}-arg-{key}", seq(name, value))

    def _raw_value(self, schema: Any) -> str:
        values = schema.get("enum") if isinstance(schema, dict) else None
        if isinstance(values, list) and values and all(isinstance(v, str) for v in values):
            return alt(*(chars(v) for v in values))
        return text_excluding(self.builder, self._value_ends(), "raw-value")

    def _value_ends(self) -> list[str]:
        """What ends a raw string value: its suffix, or else whatever may follow it."""
        args, function, fmt = self.tools.arguments, self.tools.function, self.tools.format
        if args.value_suffix.strip():
            return [args.value_suffix.strip()]
        followers = (args.separator, args.name_prefix, args.end, function.close,
                     fmt.per_call_end, fmt.section_end)
        return [m.strip() for m in followers if m.strip()]
