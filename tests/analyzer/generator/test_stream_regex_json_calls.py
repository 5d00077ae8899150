"""Runs from a loop of calls whose heads are markup (Kimi-K2's `<|tool_call_begin|>
functions.NAME:IDX<|tool_call_argument_begin|>`, Mistral's `[TOOL_CALLS]NAME[CALL_ID]`,
DeepSeek-V3.1's `NAME<｜tool▁sep｜>`), decided by `generator/regexjson.py`: at every cut of
every text a stream runs from such a point, the regex path and the tree path leave the same
outcome, events, resume point, leaf, positions, holds, memo and `_steady` answer; whole
streams give the same deltas and message with the regexes and without; and the runs of the
call heads are decided (a call's index, new at every call, is not in the key)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from rendered_calls import ARGUMENTS, analysed, generated_call, template_paths
from test_stream_regex_runs_corpus import (
    PAIR_CHARS,
    SIZES,
    every_cut_agrees,
    left,
    met_points,
    rendered_pairs,
    tree_runs,
    whole_streams_agree,
)

from analyzer import load_template_file
from analyzer.analysis.pipeline import compiled
from analyzer.checks.verify import Case, Subject, call, render_case, required_kwargs
from analyzer.generator import regexjson
from analyzer.parsing import stream as streaming
from analyzer.parsing.message import Message
from analyzer.parsing.stream import StreamParser
from analyzer.peg.state import MatchState


@pytest.fixture(autouse=True)
def built_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Shapes built at a point's first run: every point met here is read."""
    monkeypatch.setattr(streaming, "BUILD_AFTER", 1)


def json_call_templates() -> list[Path]:
    """The templates whose generated grammar has a loop of calls regexjson reads (derived:
    by the grammar, not by name)."""
    found = []
    for path in template_paths():
        generated = generated_call(path)
        if generated is not None and regexjson._has_json_calls(generated[0].parser.start):
            found.append(path)
    return found


def edited(rendering: str) -> list[str]:
    """The rendering with heads the regexes read otherwise: a longer call index, whitespace
    before the arguments' marker (a little, and past the reach of the name's lookahead
    regex: 64 characters), a letter after the index (the lookahead fails), the namespace
    left out (the choice's second alternative)."""
    found = [rendering]
    index = re.search(r":0(?=\D)", rendering)
    if index is not None:
        at = index.end()
        found += [rendering[:at] + "1234" + rendering[at:],
                  rendering[:at] + " \n" + rendering[at:],
                  rendering[:at] + " " * 70 + rendering[at:],
                  rendering[:at] + "x" + rendering[at:]]
    found.append(rendering.replace("functions.", ""))
    return list(dict.fromkeys(found))


def two_calls(path: Path) -> str | None:
    """The template's rendering of two calls in one message (the loop of calls runs from
    the second), None where it renders no such message."""
    analysis = analysed(path)
    loaded = load_template_file(path)
    chat = compiled(loaded.source, loaded.bos_token, loaded.eos_token, analysis.render_mode)
    subject = Subject(analysis, chat, required_kwargs(chat, analysis))
    result = render_case(subject, Case("two", Message(tool_calls=(
        call("search_records", ARGUMENTS), call("search_records", {"query": "inns"})))))
    return None if isinstance(result, str) else result.output


def token_chunks(text: str, size: int, tokens: tuple[str, ...]) -> list[str]:
    """Chunks of size characters, a special token never split (as a server's are)."""
    from bench import side_by_side
    return side_by_side.chunked(text, size, tokens)


@pytest.mark.parametrize("path", json_call_templates(), ids=lambda p: p.stem)
def test_every_cut_a_json_calls_regex_decides_is_the_tree_run(path: Path) -> None:
    parser, rendering = generated_call(path)  # type: ignore[misc]
    tail = parser.prompt.tail
    decided = 0
    second = two_calls(path)
    for output in edited(rendering) + ([] if second is None else edited(second)):
        for size in SIZES:
            decided += every_cut_agrees(parser.parser, [tail] + [
                output[at:at + size] for at in range(0, len(output), size)])
        whole_streams_agree(parser.parser, lambda size, output=output: [tail] + [
            output[at:at + size] for at in range(0, len(output), size)])
    tokens = analysed(path).preserved_tokens
    for output in [rendering] + ([] if second is None else [second]):
        for size in (1, 16):  # as a server's chunks: special tokens whole
            chunks = [tail] + token_chunks(output, size, tokens)
            decided += every_cut_agrees(parser.parser, chunks)
            longest_first_agrees(parser.parser, chunks)
    assert decided > 0


def longest_first_agrees(parser: Any, chunks: list[str]) -> None:
    """every_cut_agrees with the cuts taken longest first, the points' shapes new: a key's
    first text (the one learned) is then a longer one, which a shorter text of the same key
    must not be given (a head whose text ends before or after an optional part)."""
    stream = StreamParser(parser)
    for point, text in met_points(parser, chunks):
        streaming.POINTS.clear()
        shapes = streaming.shapes_of(point)
        if shapes is streaming.NO_SHAPES:
            continue
        for cut in range(len(text), -1, -1):
            piece = text[:cut]
            state, memo = MatchState("", True, traced=False), {}
            fast = shapes.run(state, point, piece, memo, 7, {})
            tree_state, tree, tree_memo, same = tree_runs(point, piece)
            assert left(state, fast, memo, stream, point, piece, repr) == left(
                tree_state, tree, tree_memo, stream, point, piece, repr), (cut, piece)


def test_some_templates_have_such_loops() -> None:
    names = {path.stem for path in json_call_templates()}
    assert "tools_indexed" in names  # ours: Kimi-K2's call markup


def test_a_kimi_head_is_read_to_its_arguments_marker_and_not_past_a_bad_index() -> None:
    from rendered_calls import FORMATS
    generated = generated_call(FORMATS / "tools_indexed.jinja")
    assert generated is not None
    parser, rendering = generated
    chunks = [parser.prompt.tail] + [rendering[at:at + 3] for at in range(0, len(rendering), 3)]
    loops = [segment for point, _ in met_points(parser.parser, chunks)
             for segment in streaming.shapes_of(point).segments
             if type(segment) is regexjson.JsonCallsSegment]
    assert loops
    head = loops[0].heads["functions.search_records:"]
    marker = "<|tool_call_argument_begin|>"
    assert head.regex.fullmatch("functions.search_records:12" + marker)
    assert head.regex.fullmatch("functions.search_records:12 \n" + marker)
    assert not head.regex.fullmatch("functions.search_records:12x" + marker)
    assert not head.regex.fullmatch("functions.search_records:" + marker)


@pytest.mark.parametrize("name", ["kimi-k2", "kimi-k2-thinking", "deepseek-v3.1"])
def test_call_heads_of_a_rendered_pair_are_decided(name: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A 16-byte stream, special tokens whole (side_by_side's chunks): the runs at a call's
    token, its head begun and its whole head take the regexes (main: three tree runs a call,
    each at a new text; here the tree runs about once a call, where the value ends), and the
    deltas are those of the tree."""
    if not rendered_pairs():
        pytest.skip("no shared bench inputs")
    from bench import rendered
    output = rendered.render_output(rendered.BY_NAME[name], "25k")
    chunks = [output.tail] + token_chunks(output.texts[0], 16, output.special_tokens)
    calls = output.texts[0].count("search_files") + output.texts[0].count("get_weather") + \
        output.texts[0].count("write_file") + output.texts[0].count("create_event")
    counts = []
    for decided in (False, True):
        for _ in range(2):  # the points' shapes built and their keys learned
            stream = StreamParser(output.parser)
            for chunk in chunks:
                stream.feed(chunk)
            stream.finish()
        tree_runs: list[None] = []

        def counted(self: MatchState, *args: Any, runs: list[None] = tree_runs,
                    rerun: Any = MatchState.rerun) -> int:
            runs.append(None)
            return rerun(self, *args)  # type: ignore[no-any-return]

        monkeypatch.setattr(MatchState, "rerun", counted)
        stream = StreamParser(output.parser)
        stream.decided = decided
        deltas = [stream.feed(chunk) for chunk in chunks] + [stream.finish()]
        monkeypatch.undo()
        monkeypatch.setattr(streaming, "BUILD_AFTER", 1)
        counts.append((len(tree_runs), deltas, stream.message()))
    (off, off_deltas, off_message), (on, on_deltas, on_message) = counts
    assert on_deltas == off_deltas and on_message == off_message
    assert off > 2 * calls  # the head's runs, and the value's end
    assert on < calls + 12, (on, off, calls)


def json_call_pairs() -> list[str]:
    """The rendered bench pairs whose grammar has a loop of calls regexjson reads."""
    if not rendered_pairs():
        return []
    from bench import rendered
    found = []
    for name in rendered_pairs():
        try:
            output = rendered.render_output(rendered.BY_NAME[name], PAIR_CHARS)
        except rendered.NotRendered:
            continue
        if regexjson._has_json_calls(output.parser.start):
            found.append(name)
    return found


@pytest.mark.parametrize("name", json_call_pairs() or ["(no bench inputs)"])
def test_every_cut_of_a_rendered_pair_in_server_chunks_is_the_tree_run(name: str) -> None:
    """Several calls of several tools (the corpus renderings above call one), cut as a
    server's chunks are (special tokens whole: a text then ends at the arguments' marker,
    which cuts inside the marker never give): calls of different tools share no outcome."""
    if not json_call_pairs():
        pytest.skip("no shared bench inputs")
    from bench import rendered
    output = rendered.render_output(rendered.BY_NAME[name], PAIR_CHARS)
    decided = 0
    for text in output.texts[:2]:
        for size in (1, 16):
            chunks = [output.tail] + token_chunks(text, size, output.special_tokens)
            decided += every_cut_agrees(output.parser, chunks)
            longest_first_agrees(output.parser, chunks)
        whole_streams_agree(output.parser, lambda size, text=text: [output.tail] + token_chunks(
            text, size, output.special_tokens))
    assert decided > 0
