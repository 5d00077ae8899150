"""Split a JSON schema by the JSON type of its values.

Templates that write one prefix per value type (Kimi-K3's `type="number"`) need the values of
each type on their own: `{"type": ["integer", "null"]}` becomes number -> integer values and
null -> null. Integers count as numbers, as in those templates.
"""

from __future__ import annotations

from typing import Any

JSON_TYPES = ("string", "number", "boolean", "object", "array", "null")
_TYPE_OF_NAME = {"integer": "number", **{t: t for t in JSON_TYPES}}
# Keywords that imply a type when a schema names none.
_TYPE_HINTS = (
    ("object", ("properties", "additionalProperties", "patternProperties")),
    ("array", ("items", "prefixItems", "minItems", "maxItems")),
    ("string", ("minLength", "maxLength", "pattern", "format")),
    ("number", ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")),
)


def json_type(value: Any) -> str:
    """Name the JSON type of a Python value (bool before int: True is a boolean)."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    return "array" if isinstance(value, list) else "null"


def _any_of_each() -> dict[str, Any]:
    return {t: {"type": t} for t in JSON_TYPES}


def _merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """Join per-type splits: a type found in several parts takes any of their schemas."""
    merged: dict[str, list[Any]] = {}
    for part in parts:
        for kind, schema in part.items():
            merged.setdefault(kind, []).append(schema)
    return {k: v[0] if len(v) == 1 else {"anyOf": v} for k, v in merged.items()}


def _values_by_type(values: list[Any]) -> dict[str, Any]:
    grouped: dict[str, list[Any]] = {}
    for value in values:
        grouped.setdefault(json_type(value), []).append(value)
    return {kind: {"enum": found} for kind, found in grouped.items()}


def _declared_types(schema: dict[str, Any]) -> list[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [k for k in kind if isinstance(k, str)]
    return [t for t, keys in _TYPE_HINTS if any(key in schema for key in keys)][:1]


def split_by_type(schema: Any) -> dict[str, Any]:
    """Map each JSON type a schema allows to a schema of just its values of that type.

    A schema this cannot see through (`$ref`, `allOf`) maps every type to itself.
    """
    if not isinstance(schema, dict) or not schema:
        return _any_of_each() if schema is not False else {}
    if "const" in schema or "enum" in schema:
        values = schema.get("enum", [schema.get("const")])
        return _values_by_type(values if isinstance(values, list) else [])
    options = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(options, list):
        found = _merge([split_by_type(option) for option in options])
    elif "$ref" in schema or "allOf" in schema:
        found = {t: schema for t in JSON_TYPES}
    else:
        kinds = _declared_types(schema)
        if not kinds:
            found = _any_of_each()
        else:
            rest = {key: v for key, v in schema.items() if key != "nullable"}
            found = _merge([{_TYPE_OF_NAME[k]: {**rest, "type": k}} for k in kinds
                            if k in _TYPE_OF_NAME])
    if schema.get("nullable") is True:
        found.setdefault("null", {"type": "null"})
    return found


def union(schemas: list[Any]) -> Any:
    """One schema allowing what any of schemas allows."""
    return schemas[0] if len(schemas) == 1 else {"anyOf": schemas}
