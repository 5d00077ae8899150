"""Tests for analyzer/peg/notes.py: a tolerance records where it read departing text."""

from __future__ import annotations

from analyzer import peg as p
from analyzer.parsing.stream import StreamParser
from analyzer.peg.notes import Note, shown

DOUBLED = p.noted(p.literal("<think>"), "repeated_reasoning_start", "accepted", "one `<think>`")
GRAMMAR = p.Parser(p.optional(DOUBLED) + p.content(p.until("<think>")) + p.end())


def test_a_noted_match_records_its_note_its_place_and_what_was_found() -> None:
    notices = GRAMMAR.parse("<think>hello").notices
    assert len(notices) == 1
    notice = notices[0]
    assert notice.note == Note("repeated_reasoning_start", "accepted", "one `<think>`")
    assert (notice.offset, notice.line, notice.column) == (0, 1, 1)
    assert notice.found == "`<think>hello`" and notice.context == "<think>hello\n^"


def test_no_match_no_note() -> None:
    assert GRAMMAR.parse("hello").notices == ()


def test_a_stream_notes_it_once_whatever_the_chunks() -> None:
    text = "ab\n<think>x"
    grammar = p.Parser(p.content(p.until("<think>")) + p.optional(DOUBLED)
                       + p.content(p.until("<think>")) + p.end())
    whole = grammar.parse(text).notices
    for size in (1, 2, 5):
        stream = StreamParser(grammar)
        for at in range(0, len(text), size):
            stream.feed(text[at: at + size])
        stream.finish()
        assert [(n.offset, n.line, n.column, n.context) for n in stream.watch.notices] == \
            [(n.offset, n.line, n.column, n.context) for n in whole] == [(3, 2, 1, "<think>x\n^")]


def test_found_text_is_shown_on_one_line_and_nothing_as_end_of_input() -> None:
    assert shown("a\nb") == "`a\\nb`" and shown("") == "end of input"
