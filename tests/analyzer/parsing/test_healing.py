"""Tests for analyzer/parsing/healing.py: appending what closes a broken-off JSON object."""

from __future__ import annotations

import json

import pytest

from analyzer.parsing.healing import healing

CUT = [
    ("", "{}"),
    ("{", "}"),
    ('{"city": "Par', '"}'),
    ('{"city": "P\\', '\\"}'),
    ('{"city"', ": null}"),
    ('{"city":', " null}"),
    ('{"city": "Paris", "un', '": null}'),
    ('{"ok": tr', "ue}"),
    ('{"n": 1.', "0}"),
    ('{"n": -', "0}"),
    ('{"tags": ["a", ', "null]}"),
    ('{"a": {"b": [', "]}}"),
    ('{"a": 1,', '"": null}'),
    ('{"a": "x"}', ""),
]


@pytest.mark.parametrize(("text", "tail"), CUT)
def test_a_cut_object_is_closed_by_appending_only(text: str, tail: str) -> None:
    assert healing(text) == tail
    assert isinstance(json.loads(text + tail), dict)


def test_every_prefix_of_a_real_arguments_object_heals_into_an_object() -> None:
    whole = json.dumps({"city": "Paris \"centre\"", "days": [1, 2.5, -3e2], "open": False,
                        "filters": {"x": None, "y": "a\\b"}})
    for cut in range(len(whole) + 1):
        text = whole[:cut]
        assert isinstance(json.loads(text + healing(text)), dict), text
