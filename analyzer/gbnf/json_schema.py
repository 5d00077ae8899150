"""Turn JSON schemas into GBNF rules, for JSON or for Python-literal ("python dict") text.

Objects list their declared properties in schema order (with sorted_keys, alphabetical order
too), required ones mandatory and optional ones skippable; extra keys are allowed only when
additionalProperties says so, or when the object declares no properties at all. `pattern` is
not compiled: such strings match any string. Lengths and item counts above REPETITION_CAP are
left unbounded.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from analyzer.gbnf.builder import (
    ROOT,
    GrammarBuilder,
    alt,
    literal,
    opt,
    repeat,
    seq,
    star,
)
from analyzer.gbnf.errors import SchemaError

# llama.cpp refuses repetition counts of 2000 and more; stay well below.
REPETITION_CAP = 1000

SPACE = "[ \\t\\r\\n]{0,32}"
HEX = "[0-9a-fA-F]"
JSON_CHAR = f'[^"\\\\\\x00-\\x1f] | "\\\\" (["\\\\/bfnrt] | "u" {HEX}{{4}})'
PY_ESCAPE = f'["\'\\\\/abfnrtv0] | "x" {HEX}{{2}} | "u" {HEX}{{4}} | "U" {HEX}{{8}}'
DIGITS = '("0" | [1-9] [0-9]{0,15})'
FRACTION = '("." [0-9]{1,20})?'
EXPONENT = '([eE] [-+]? [0-9]{1,3})?'

# Loose shapes for common string formats (values are checked by shape, not by calendar).
FORMATS = {
    "date": "[0-9]{4} \"-\" [0-9]{2} \"-\" [0-9]{2}",
    "time": "[0-9]{2} \":\" [0-9]{2} \":\" [0-9]{2} (\".\" [0-9]{1,9})? "
    "(\"Z\" | [-+] [0-9]{2} \":\" [0-9]{2})?",
    "uuid": f"{HEX}{{8}} \"-\" {HEX}{{4}} \"-\" {HEX}{{4}} \"-\" {HEX}{{4}} \"-\" {HEX}{{12}}",
}
FORMATS["date-time"] = f"{FORMATS['date']} [Tt ] {FORMATS['time']}"

_TYPE_HINTS = (
    ("object", ("properties", "additionalProperties", "required", "patternProperties")),
    ("array", ("items", "prefixItems", "minItems", "maxItems")),
    ("string", ("minLength", "maxLength", "pattern", "format")),
    ("number", ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")),
)


def _json_forms(value: Any) -> list[str]:
    return list(dict.fromkeys([json.dumps(value, ensure_ascii=False), json.dumps(value)]))


def _cap(count: Any) -> int | None:
    return count if isinstance(count, int) and 0 <= count <= REPETITION_CAP else None


class SchemaConverter:
    """Add rules for values of given schemas to a builder, sharing primitives."""

    flavour = "json"  # tells apart the shared rules of converters for other dialects

    def __init__(
        self, builder: GrammarBuilder, *, python_dicts: bool = False, root_schema: Any = None,
        sorted_keys: bool = False,
    ) -> None:
        self.builder = builder
        self.python = python_dicts
        # Templates that write values themselves often sort keys (Jinja's dictsort): accept
        # members in alphabetical order as well as in the schema's.
        self.sorted_keys = sorted_keys
        self.root_schema = root_schema
        self._refs: dict[str, str] = {}

    # -- primitives ------------------------------------------------------------------------

    def space(self) -> str:
        """Whitespace between tokens, bounded so a model cannot loop on it."""
        return self.builder.add("space", alt(SPACE, self._never()))

    def _never(self) -> str:
        """A rule no text matches, which keeps every rule that uses `space` a parser rule.

        llguidance turns a rule made only of terminals into one greedy lexeme and never
        splits a lexeme again, so a long lexeme next to a parser rule that starts the same
        way swallows text the parser rule needed (valid calls were rejected). A reference
        to a recursive rule stops that. NUL ends strings in llama.cpp's matcher, so there
        this branch is dead; models do not emit NUL either.
        """
        key = "never"
        if key not in self.builder.memo:
            name = self.builder.reserve("never")
            self.builder.define(name, seq(literal("\x00"), name))
            self.builder.memo[key] = name
        return self.builder.memo[key]

    def separator(self) -> str:
        """A comma between members or items."""
        return self.builder.add("comma", seq(self.space(), literal(","), self.space()))

    def _json_char(self) -> str:
        return self.builder.add("string-char", JSON_CHAR)

    def _python_char(self, quote: str) -> str:
        escape = self.builder.add("py-escape", PY_ESCAPE)
        body = f'[^{quote}\\\\\\x00-\\x1f] | "\\\\" {escape}'
        return self.builder.add("py-char" if quote == "'" else "py-dq-char", body)

    def string(self) -> str:
        """Any string: double-quoted JSON, or either quote style in Python flavour."""
        return self._sized_string(0, None)

    def any_key(self) -> str:
        """A key of an object member the schema does not declare."""
        return self.string()

    def integer(self, *, signed: bool = True) -> str:
        """An integer, with an optional minus sign when signed."""
        hint = "integer" if signed else "natural"
        return self.builder.add(hint, seq('"-"?' if signed else "", DIGITS))

    def number(self, *, signed: bool = True) -> str:
        """A JSON number."""
        hint = "number" if signed else "unsigned-number"
        return self.builder.add(hint, seq('"-"?' if signed else "", DIGITS, FRACTION, EXPONENT))

    def boolean(self) -> str:
        """true or false (and Python's True or False in Python flavour)."""
        words = ["true", "false"] + (["True", "False"] if self.python else [])
        return self.builder.add("boolean", alt(*(literal(w) for w in words)))

    def null(self) -> str:
        """null (and Python's None in Python flavour)."""
        return self.builder.add("null", alt(literal("null"), *([literal("None")] if self.python
                                                                 else [])))

    def any_value(self) -> str:
        """Any JSON value (or Python literal in Python flavour)."""
        key = ("any-value", self.python, self.flavour)  # sorted_keys: no declared keys here
        if key in self.builder.memo:
            return self.builder.memo[key]
        value = self.builder.reserve("value")
        self.builder.memo[key] = value
        member = seq(self.any_key(), self.space(), literal(":"), self.space(), value)
        obj = self.builder.add("object", self._bracketed("{", member, "}"))
        arr = self.builder.add("array", self._bracketed("[", value, "]"))
        scalars = (self.string(), self.number(), self.boolean(), self.null())
        self.builder.define(value, alt(obj, arr, *scalars))
        return value

    def _bracketed(self, open_: str, item: str, close: str) -> str:
        items = seq(item, star(seq(self.separator(), item)))
        return seq(literal(open_), self.space(), opt(items), self.space(), literal(close))

    # -- schemas ---------------------------------------------------------------------------

    def value(self, schema: Any, hint: str, path: str = "") -> str:
        """Return an expression matching values of schema, adding the rules it needs."""
        if schema is True or schema == {}:
            return self.any_value()
        if schema is False:
            raise SchemaError("the schema `false` allows no value", path=path)
        if not isinstance(schema, dict):
            raise SchemaError(f"expected an object or a boolean, found {schema!r}", path=path)
        expr = self._dispatch(schema, hint, path)
        if schema.get("nullable") is True:
            return alt(expr, self.null())
        return expr

    def _dispatch(self, schema: dict[str, Any], hint: str, path: str) -> str:
        if "$ref" in schema:
            return self._ref(schema["$ref"], path)
        if "const" in schema:
            return self.const(schema["const"])
        if "enum" in schema:
            return self._enum(schema["enum"], path)
        for key in ("anyOf", "oneOf"):
            if key in schema:
                return self._union(schema[key], hint, f"{path}/{key}")
        if "allOf" in schema:
            return self.value(self._merge_all_of(schema, path), hint, path)
        kind = schema.get("type")
        if isinstance(kind, list):
            return alt(*(self._typed(schema, k, hint, path) for k in kind))
        return self._typed(schema, kind or self._infer_type(schema), hint, path)

    def _infer_type(self, schema: dict[str, Any]) -> str:
        for kind, keys in _TYPE_HINTS:
            if any(key in schema for key in keys):
                return kind
        return "any"

    def _typed(self, schema: dict[str, Any], kind: Any, hint: str, path: str) -> str:
        signed = not self._is_non_negative(schema)
        simple: dict[str, Callable[[], str]] = {
            "integer": lambda: self.integer(signed=signed),
            "number": lambda: self.number(signed=signed),
            "boolean": self.boolean,
            "null": self.null,
            "any": self.any_value,
            "string": lambda: self._string(schema),
            "object": lambda: self._object(schema, hint, path),
            "array": lambda: self._array(schema, hint, path),
        }
        if kind not in simple:
            raise SchemaError(f"unknown type {kind!r}", path=path)
        return simple[kind]()

    def _is_non_negative(self, schema: dict[str, Any]) -> bool:
        low = schema.get("minimum", schema.get("exclusiveMinimum"))
        return isinstance(low, int | float) and not isinstance(low, bool) and low >= 0

    def _union(self, options: Any, hint: str, path: str) -> str:
        if not isinstance(options, list) or not options:
            raise SchemaError("expected a non-empty list of schemas", path=path)
        return alt(*(self.value(s, f"{hint}-{i}", f"{path}/{i}") for i, s in enumerate(options)))

    def _enum(self, values: Any, path: str) -> str:
        if not isinstance(values, list) or not values:
            raise SchemaError("enum must be a non-empty list", path=f"{path}/enum")
        return alt(*(self.const(v) for v in values))

    # -- constants -------------------------------------------------------------------------

    def const(self, value: Any) -> str:
        """Match exactly this value (with free whitespace inside objects and arrays)."""
        if isinstance(value, dict):
            members = [seq(self._key(str(k)), self.space(), literal(":"), self.space(),
                           self.const(v)) for k, v in value.items()]
            return self._fixed_sequence("{", members, "}")
        if isinstance(value, list):
            return self._fixed_sequence("[", [self.const(v) for v in value], "]")
        forms = _json_forms(value)
        if self.python:
            forms.append(self._python_literal(value))
        return alt(*(literal(f) for f in dict.fromkeys(forms)))

    def _python_literal(self, value: Any) -> str:
        if isinstance(value, str):
            return repr(value)
        return "None" if value is None else repr(value)

    def _fixed_sequence(self, open_: str, items: list[str], close: str) -> str:
        inner: list[str] = []
        for i, item in enumerate(items):
            inner += [self.separator()] * (i > 0) + [item]
        return seq(literal(open_), self.space(), *inner, self.space(), literal(close))

    def _key(self, key: str) -> str:
        forms = _json_forms(key) + ([repr(key)] if self.python else [])
        return alt(*(literal(f) for f in dict.fromkeys(forms)))

    # -- strings ---------------------------------------------------------------------------

    def _string(self, schema: dict[str, Any]) -> str:
        shape = FORMATS.get(str(schema.get("format", "")))
        if shape is not None:
            return self._quoted(self.builder.add(f"{schema['format']}-text", shape))
        low, high = _cap(schema.get("minLength", 0)) or 0, _cap(schema.get("maxLength"))
        if low == 0 and high is None:
            return self.string()
        return self._sized_string(low, high)

    def _quoted(self, content: str) -> str:
        double = seq(literal('"'), content, literal('"'))
        return alt(double, seq(literal("'"), content, literal("'"))) if self.python else double

    def quoted_string(self, quote: str) -> str:
        """A Python string literal between this quote ('"' is a JSON string as well)."""
        escaped = '\\"' if quote == '"' else quote
        body = seq(literal(quote), star(self._python_char(escaped)), literal(quote))
        return self.builder.add("py-dq-string" if quote == '"' else "py-sq-string", body)

    def _sized_string(self, low: int, high: int | None) -> str:
        size = "" if (low, high) == (0, None) else f"-{low}-{high or 'n'}"
        if not self.python:
            double = seq(literal('"'), repeat(self._json_char(), low, high), literal('"'))
            return self.builder.add(f"string{size}", double)
        double = seq(literal('"'), repeat(self._python_char('\\"'), low, high), literal('"'))
        single = seq(literal("'"), repeat(self._python_char("'"), low, high), literal("'"))
        return self.builder.add(f"py-string{size}", alt(single, double))

    # -- objects ---------------------------------------------------------------------------

    def _object(self, schema: dict[str, Any], hint: str, path: str) -> str:
        props = schema.get("properties") or {}
        if not isinstance(props, dict):
            raise SchemaError("properties must be an object", path=f"{path}/properties")
        required = [k for k in schema.get("required") or [] if isinstance(k, str)]
        names = list(props) + [k for k in required if k not in props]
        extra = self._extra_member(schema, bool(names), hint, path)
        orders = [names, sorted(names)] if self.sorted_keys else [names]
        bodies = []
        for order in dict.fromkeys(tuple(o) for o in orders):
            members = [(self._member(k, props.get(k, True), hint, path), k in required)
                       for k in order if props.get(k, True) is not False]
            bodies.append(self._object_body(members, extra, hint))
        return self.builder.add(hint, alt(*bodies))

    def _member(self, key: str, schema: Any, hint: str, path: str) -> str:
        value = self.value(schema, f"{hint}-{key}", f"{path}/properties/{key}")
        return seq(self._key(key), self.space(), literal(":"), self.space(), value)

    def _extra_member(self, schema: dict[str, Any], declared: bool, hint: str,
                      path: str) -> str:
        extra = schema.get("additionalProperties")
        if extra is False or (extra is None and declared):
            return ""
        value = self.value(True if extra is None else extra, f"{hint}-extra",
                           f"{path}/additionalProperties")
        return seq(self.any_key(), self.space(), literal(":"), self.space(), value)

    def _object_body(self, members: list[tuple[str, bool]], extra: str, hint: str) -> str:
        """Build '{ ... }' where members come in order and commas sit only between them."""
        tails = self._member_tails(members, extra, hint)
        first_required = next((i for i, (_, req) in enumerate(members) if req), len(members))
        starts = [seq(m, tails[i + 1]) for i, (m, _) in enumerate(members)
                  if i <= first_required]
        if first_required == len(members) and extra:
            starts.append(seq(extra, tails[len(members)]))
        inside = alt(*starts) if starts else ""
        if first_required == len(members):
            inside = opt(inside)
        return seq(literal("{"), self.space(), inside, self.space(), literal("}"))

    def _member_tails(self, members: list[tuple[str, bool]], extra: str, hint: str) -> list[str]:
        """tails[i]: members i.. each led by a comma (a rule name, or "" when empty)."""
        sep = self.separator()
        tails = [""] * (len(members) + 1)
        if extra:
            tails[-1] = self.builder.add(f"{hint}-extras", star(seq(sep, extra)))
        for i in range(len(members) - 1, -1, -1):
            member, required = members[i]
            led = seq(sep, member)
            body = seq(led if required else opt(led), tails[i + 1])
            tails[i] = self.builder.add(f"{hint}-after-{i}", body) if i > 0 else body
        return tails

    # -- arrays ----------------------------------------------------------------------------

    def _array(self, schema: dict[str, Any], hint: str, path: str) -> str:
        prefix = schema.get("prefixItems")
        items = schema.get("items", True)
        if isinstance(items, list):  # the older tuple form
            prefix, items = items, schema.get("additionalItems", True)
        if isinstance(prefix, list):
            return self._tuple(prefix, items, hint, path)
        item = self.value(items, f"{hint}-item", f"{path}/items")
        low = _cap(schema.get("minItems", 0)) or 0
        high = _cap(schema.get("maxItems"))
        return self.builder.add(hint, self._counted(item, low, high, hint))

    def _counted(self, item: str, low: int, high: int | None, hint: str) -> str:
        if high == 0:
            return seq(literal("["), self.space(), literal("]"))
        more = self.builder.add(f"{hint}-more", seq(self.separator(), item))
        rest = repeat(more, max(low - 1, 0), None if high is None else high - 1)
        inside = seq(item, rest)
        return seq(literal("["), self.space(), inside if low > 0 else opt(inside),
                   self.space(), literal("]"))

    def _tuple(self, prefix: list[Any], items: Any, hint: str, path: str) -> str:
        parts = [self.value(s, f"{hint}-{i}", f"{path}/prefixItems/{i}")
                 for i, s in enumerate(prefix)]
        inner: list[str] = []
        for i, part in enumerate(parts):
            inner += [self.separator()] * (i > 0) + [part]
        if items is not False:
            item = self.value(items, f"{hint}-item", f"{path}/items")
            more = star(seq(self.separator(), item))
            inner.append(more if parts else opt(seq(item, more)))
        return self.builder.add(hint, seq(literal("["), self.space(), *inner, self.space(),
                                          literal("]")))

    # -- references ------------------------------------------------------------------------

    def _ref(self, ref: Any, path: str) -> str:
        if not isinstance(ref, str) or not ref.startswith("#"):
            raise SchemaError(f"only local references (#/...) are supported, found {ref!r}",
                              path=path)
        if ref not in self._refs:
            target = self._resolve(ref, path)
            name = self.builder.reserve(ref.rsplit("/", 1)[-1] or "schema")
            self._refs[ref] = name
            self.builder.define(name, self.value(target, name, ref[1:]))
        return self._refs[ref]

    def _resolve(self, ref: str, path: str) -> Any:
        node = self.root_schema
        for part in filter(None, ref[1:].split("/")):
            key = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and key in node:
                node = node[key]
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                raise SchemaError(f"reference {ref} points nowhere", path=path)
        return node

    def _merge_all_of(self, schema: dict[str, Any], path: str) -> dict[str, Any]:
        merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        for i, part in enumerate(schema["allOf"]):
            if isinstance(part, dict) and "$ref" in part:
                part = self._resolve(part["$ref"], f"{path}/allOf/{i}")
            if not isinstance(part, dict):
                raise SchemaError("allOf members must be objects", path=f"{path}/allOf/{i}")
            props = {**merged.get("properties", {}), **part.get("properties", {})}
            required = list(dict.fromkeys([*merged.get("required", []),
                                           *part.get("required", [])]))
            merged = {**part, **merged, "properties": props, "required": required}
        return {k: v for k, v in merged.items() if v or k not in ("properties", "required")}


def schema_to_gbnf(schema: Any, name: str = "value", *, python_dicts: bool = False) -> str:
    """Return a whole grammar whose root matches the values schema allows."""
    builder = GrammarBuilder()
    converter = SchemaConverter(builder, python_dicts=python_dicts, root_schema=schema)
    builder.define(ROOT, converter.value(schema, name))
    return builder.render()
