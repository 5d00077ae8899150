"""Routing an analysis to the generated parser ("auto") or a dedicated handler."""

from __future__ import annotations

from pathlib import Path

from analyzer.analysis import analyze
from analyzer.handlers import DedicatedHandler, choose_handler

FORMATS = Path(__file__).resolve().parents[2] / "templates_corpus" / "formats"


def test_auto_when_no_dedicated_handler_applies() -> None:
    source = (FORMATS / "plain.jinja").read_text()
    assert choose_handler(source, analyze(source)) == "auto"


def test_the_first_matching_dedicated_handler_wins() -> None:
    source = (FORMATS / "tools_tagged.jinja").read_text()
    handlers = (
        DedicatedHandler("never", lambda src, a: False, "does not apply"),
        DedicatedHandler("tagged", lambda src, a: "<parameter=" in src, "matches the source"),
        DedicatedHandler("later", lambda src, a: True, "comes too late"),
    )
    assert choose_handler(source, analyze(source), handlers) == "tagged"
