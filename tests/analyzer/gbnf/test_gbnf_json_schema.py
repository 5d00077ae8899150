"""Tests for analyzer/gbnf/json_schema.py: JSON schema to GBNF, checked with llguidance."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analyzer.gbnf.check import grammar_accepts
from analyzer.gbnf.errors import SchemaError
from analyzer.gbnf.json_schema import schema_to_gbnf
from analyzer.gbnf.lint import check_gbnf_strict


def _grammar(schema: Any, *, python_dicts: bool = False) -> str:
    grammar = schema_to_gbnf(schema, "value", python_dicts=python_dicts)
    assert check_gbnf_strict(grammar) == []
    return grammar


def _accepts(schema: Any, text: str, **kwargs: Any) -> bool:
    return grammar_accepts(_grammar(schema, **kwargs), text)


WEATHER = {
    "type": "object",
    "properties": {
        "location": {"type": "string"},
        "days": {"type": "integer"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
    },
    "required": ["location"],
}


@pytest.mark.parametrize(
    "text",
    [
        '{"location": "Paris"}',
        '{"location": "Paris", "days": 3}',
        '{"location": "Paris", "unit": "celsius"}',
        '{ "location" : "Paris" , "days" : -2 , "unit" : "fahrenheit" }',
        '{\n  "location": "Paris",\n  "days": 3\n}',
    ],
)
def test_object_accepts_required_and_any_optional_properties_in_order(text: str) -> None:
    assert _accepts(WEATHER, text)


@pytest.mark.parametrize(
    "text",
    [
        "{}",
        '{"days": 3}',
        '{"location": "Paris", "days": 3.5}',
        '{"location": "Paris", "unit": "kelvin"}',
        '{"location": "Paris", "other": 1}',
        '{"location": "Paris",}',
        '{"location": "Paris" "days": 3}',
        "{'location': 'Paris'}",
    ],
)
def test_object_rejects_missing_required_wrong_types_and_unknown_keys(text: str) -> None:
    assert not _accepts(WEATHER, text)


def test_object_without_required_properties_may_be_empty() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "null"}}}
    assert [_accepts(schema, t) for t in ["{}", '{"b": null}', '{"a": 1, "b": null}']] == [
        True, True, True]
    assert not _accepts(schema, '{"b": null, "a": 1}')


def test_additional_properties_allow_extra_keys_of_the_given_type() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}},
              "additionalProperties": {"type": "string"}}
    assert _accepts(schema, '{"a": 1, "x": "y", "z": "w"}')
    assert _accepts(schema, '{"x": "y"}')
    assert not _accepts(schema, '{"a": 1, "x": 2}')


def test_object_without_properties_accepts_any_members() -> None:
    assert _accepts({"type": "object"}, '{"a": [1, {"b": null}], "c": "d"}')
    assert not _accepts({"type": "object"}, "[]")


def test_nested_objects_are_checked_all_the_way_down() -> None:
    schema = {"type": "object", "properties": {"point": {
        "type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}},
        "required": ["point"]}
    assert _accepts(schema, '{"point": {"x": 1.5e3}}')
    assert not _accepts(schema, '{"point": {"x": "1"}}')


@pytest.mark.parametrize(
    ("text", "ok"),
    [("[]", False), ("[1]", True), ("[1, 2, 3]", True), ("[1, 2, 3, 4]", False),
     ("[1,2]", True), ('[1, "2"]', False)],
)
def test_arrays_respect_item_type_and_counts(text: str, ok: bool) -> None:
    schema = {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 3}
    assert _accepts(schema, text) is ok


def test_tuple_arrays_check_each_position() -> None:
    schema = {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}],
              "items": False}
    assert _accepts(schema, '["a", 1]')
    assert not _accepts(schema, '[1, "a"]')
    assert not _accepts(schema, '["a", 1, 2]')


@pytest.mark.parametrize(
    ("schema", "good", "bad"),
    [
        ({"type": "integer"}, ["0", "-7", "123"], ["1.5", "01", "+1", '"1"']),
        ({"type": "integer", "minimum": 0}, ["0", "5"], ["-5"]),
        ({"type": "number"}, ["0", "-1.25", "6.02e23", "1E-5"], [".5", "1.", "NaN"]),
        ({"type": "boolean"}, ["true", "false"], ["True", "1"]),
        ({"type": "null"}, ["null"], ["None", "0"]),
        ({"type": "string"}, ['""', '"a \\"b\\" \\u00e9 é"'], ["'a'", '"a\nb"', "a"]),
        ({"const": "fixed"}, ['"fixed"'], ['"other"']),
        ({"enum": ["a", 1, None]}, ['"a"', "1", "null"], ['"b"', "2"]),
        ({"type": "string", "maxLength": 3}, ['"abc"', '""'], ['"abcd"']),
        ({"type": "string", "minLength": 2}, ['"ab"', '"abcdef"'], ['"a"']),
        ({"type": "string", "format": "date"}, ['"2024-05-01"'], ['"May 1"']),
        ({"type": "string", "format": "date-time"}, ['"2024-05-01T10:20:30Z"'],
         ['"2024-05-01"']),
        ({"type": "string", "format": "uuid"}, ['"123e4567-e89b-12d3-a456-426614174000"'],
         ['"123"']),
        ({"type": "string", "pattern": "^[a-z]+$"}, ['"any text, pattern not compiled"'], ["1"]),
        ({"type": ["string", "null"]}, ['"x"', "null"], ["1"]),
        ({"anyOf": [{"type": "integer"}, {"type": "boolean"}]}, ["1", "true"], ['"x"']),
        ({"oneOf": [{"type": "string"}, {"type": "array"}]}, ['"x"', "[1]"], ["1"]),
        ({"type": "integer", "nullable": True}, ["1", "null"], ['"1"']),
        ({"const": {"a": [1, True]}}, ['{"a": [1, true]}', '{ "a" : [ 1 , true ] }'],
         ['{"a": [1]}']),
        ({}, ['{"any": ["json", 1, null]}', '"x"', "3"], ["{", "nope"]),
        ({"description": "anything"}, ["[]"], ["]"]),
    ],
)
def test_value_types_accept_good_and_reject_bad_text(
    schema: Any, good: list[str], bad: list[str]
) -> None:
    grammar = _grammar(schema)
    for text in good:
        assert grammar_accepts(grammar, text), text
    for text in bad:
        assert not grammar_accepts(grammar, text), text


def test_refs_to_defs_support_recursion() -> None:
    schema = {
        "$defs": {"node": {"type": "object", "properties": {
            "value": {"type": "integer"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
            "required": ["value"]}},
        "$ref": "#/$defs/node",
    }
    assert _accepts(schema, '{"value": 1, "children": [{"value": 2, "children": []}]}')
    assert not _accepts(schema, '{"value": 1, "children": [{"children": []}]}')


def test_all_of_merges_object_parts() -> None:
    schema = {"allOf": [
        {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
        {"properties": {"b": {"type": "string"}}, "required": ["b"]},
    ]}
    assert _accepts(schema, '{"a": 1, "b": "x"}')
    assert not _accepts(schema, '{"a": 1}')


def test_python_flavour_accepts_single_quotes_and_python_constants() -> None:
    schema = {"type": "object", "properties": {"name": {"type": "string"},
                                               "flag": {"type": "boolean"},
                                               "none": {"type": "null"}},
              "required": ["name", "flag", "none"]}
    for text in ["{'name': 'x', 'flag': True, 'none': None}",
                 '{"name": "it\'s", "flag": false, "none": null}',
                 "{'name': 'it\\'s', 'flag': False, 'none': None}"]:
        assert _accepts(schema, text, python_dicts=True), text
    assert not _accepts(schema, "{'name': 'x', 'flag': TRUE, 'none': None}", python_dicts=True)


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"type": "decimal"}, "schema at /: unknown type 'decimal'"),
        ({"$ref": "https://example.com/s.json"},
         "schema at /: only local references (#/...) are supported, found "
         "'https://example.com/s.json'"),
        ({"$ref": "#/$defs/missing"}, "schema at /: reference #/$defs/missing points nowhere"),
        (False, "schema at /: the schema `false` allows no value"),
        ({"type": "object", "properties": {"a": {"enum": []}}},
         "schema at /properties/a/enum: enum must be a non-empty list"),
        ({"anyOf": "x"}, "schema at /anyOf: expected a non-empty list of schemas"),
        ("string", "schema at /: expected an object or a boolean, found 'string'"),
    ],
)
def test_unusable_schemas_raise_with_the_path(schema: Any, message: str) -> None:
    with pytest.raises(SchemaError) as caught:
        schema_to_gbnf(schema)
    assert str(caught.value) == message


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**15), 10**15)
    | st.floats(allow_nan=False, allow_infinity=False, width=32) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=3),
    max_leaves=8,
)
ANY_JSON = schema_to_gbnf(True)
ANY_PYTHON = schema_to_gbnf(True, python_dicts=True)


@settings(max_examples=80, deadline=None)
@given(value=JSON_VALUES, indent=st.sampled_from([None, 2]))
def test_any_value_accepts_every_json_document(value: Any, indent: int | None) -> None:
    assert grammar_accepts(ANY_JSON, json.dumps(value, indent=indent, ensure_ascii=False))


@settings(max_examples=80, deadline=None)
@given(value=JSON_VALUES)
def test_python_flavour_accepts_python_reprs_and_json(value: Any) -> None:
    assert grammar_accepts(ANY_PYTHON, repr(value))
    assert grammar_accepts(ANY_PYTHON, json.dumps(value))
