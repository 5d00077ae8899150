"""Tests for analyzer/gbnf/schema_types.py: splitting schemas by the JSON type of values."""

from __future__ import annotations

from typing import Any

import pytest

from analyzer.gbnf.schema_types import JSON_TYPES, json_type, split_by_type, union


@pytest.mark.parametrize(
    ("value", "kind"),
    [(True, "boolean"), (3, "number"), (0.5, "number"), ("x", "string"), (None, "null"),
     ({"a": 1}, "object"), ([1], "array")],
)
def test_json_type_names_the_type_of_a_value(value: Any, kind: str) -> None:
    assert json_type(value) == kind


def test_a_single_type_maps_to_the_schema_itself_and_integers_count_as_numbers() -> None:
    schema = {"type": "integer", "minimum": 0}
    assert split_by_type(schema) == {"number": schema}


def test_a_type_list_gives_one_schema_per_type() -> None:
    found = split_by_type({"type": ["integer", "null"], "description": "cursor"})
    assert found == {"number": {"type": "integer", "description": "cursor"},
                     "null": {"type": "null", "description": "cursor"}}


def test_any_of_options_are_split_and_same_type_options_joined() -> None:
    found = split_by_type({"anyOf": [{"type": "integer"}, {"type": "null"},
                                     {"type": "number", "minimum": 1}]})
    assert found == {"number": {"anyOf": [{"type": "integer"}, {"type": "number", "minimum": 1}]},
                     "null": {"type": "null"}}


def test_enum_values_are_grouped_by_type() -> None:
    assert split_by_type({"enum": ["a", 1, "b", None]}) == {
        "string": {"enum": ["a", "b"]}, "number": {"enum": [1]}, "null": {"enum": [None]}}


def test_nullable_adds_null_and_is_not_kept_in_the_other_types() -> None:
    assert split_by_type({"type": "string", "nullable": True}) == {
        "string": {"type": "string"}, "null": {"type": "null"}}


def test_keywords_imply_a_type_when_none_is_named() -> None:
    assert list(split_by_type({"properties": {"a": {}}})) == ["object"]
    assert list(split_by_type({"items": {"type": "string"}})) == ["array"]


def test_an_unconstrained_schema_allows_every_type() -> None:
    for schema in (True, {}, {"description": "anything"}):
        assert sorted(split_by_type(schema)) == sorted(JSON_TYPES)
    assert split_by_type(False) == {}


def test_references_are_kept_whole_under_every_type() -> None:
    schema = {"$ref": "#/$defs/x"}
    assert split_by_type(schema) == dict.fromkeys(JSON_TYPES, schema)


def test_union_of_one_schema_is_that_schema() -> None:
    assert union([{"type": "null"}]) == {"type": "null"}
    assert union([{"type": "null"}, {"type": "integer"}]) == {
        "anyOf": [{"type": "null"}, {"type": "integer"}]}
