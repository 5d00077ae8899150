"""What the generator's template-derived tests share: the templates, one call rendered through
each (verify's machinery), and a parse checked one-shot against chunked streams."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from analyzer import analyze, load_template_file
from analyzer.analysis.pipeline import compiled
from analyzer.checks.verify import Case, Rendered, Subject, call, render_case, required_kwargs
from analyzer.generator import GeneratedParser, ParseReport, generate_parser
from analyzer.generator.build import StandsFor
from analyzer.model import Analysis
from analyzer.parsing.message import Message
from analyzer.parsing.stream import Delta, StreamParser, accumulate
from analyzer.peg import Expr
from analyzer.peg.state import FAIL, Event, MatchState

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT.parent / "shared" / "corpus" / "templates"
FORMATS = ROOT / "templates_corpus" / "formats"
ARGUMENTS = {"query": "hotels", "city": "Paris"}


def template_paths() -> list[Path]:
    """Our format templates, then the shared corpus when it is there."""
    found = sorted(FORMATS.glob("*.jinja"))
    return found + (sorted(CORPUS.glob("*.jinja")) if CORPUS.is_dir() else [])


def analysed(path: Path) -> Analysis:
    return analyze(load_template_file(path))


def render_call(path: Path, analysis: Analysis, case_id: str) -> Rendered | None:
    """Render an assistant message with one search_records(query, city) call, or None when
    the template cannot show it."""
    loaded = load_template_file(path)
    chat = compiled(loaded.source, loaded.bos_token, loaded.eos_token, analysis.render_mode)
    subject = Subject(analysis, chat, required_kwargs(chat, analysis))
    result = render_case(subject, Case(case_id, Message(tool_calls=(
        call("search_records", ARGUMENTS),))))
    return None if isinstance(result, str) else result


def checked(parser: GeneratedParser, output: str, sizes: tuple[int, ...] = (1, 5)) -> ParseReport:
    """Parse one-shot and in chunks of each size: messages and deviations must all agree."""
    report = parser.parse_report(output)
    for size in sizes:
        stream = parser.stream()
        pieces = [output[at:at + size] for at in range(0, len(output), size)]
        deltas = [d for piece in pieces for d in stream.feed(piece)]
        assert accumulate(deltas + stream.finish()) == report.message, size
        assert stream.deviations == report.deviations, size
    return report


@cache
def generated_call(path: Path) -> tuple[GeneratedParser, str] | None:
    """The parser generated for the template's rendering of the call (case "two") and that
    rendering; None without a generated parser or when the template cannot render it."""
    analysis = analysed(path)
    if analysis.handler != "auto":
        return None
    result = render_call(path, analysis, "two")
    if result is None:
        return None
    return generate_parser(analysis, result.options, prompt=result.prompt), result.output


def generated_call_or_skip(path: Path) -> tuple[GeneratedParser, str]:
    """generated_call(path), or skip the test that asks when there is none."""
    found = generated_call(path)
    if found is None:
        pytest.skip("no generated parser, or the template cannot render the call")
    return found


def streamed(stream: StreamParser, tail: str, chunks: list[str]) -> list[Delta]:
    """Feed the generation prompt's tail, then each chunk, then finish; return every delta."""
    deltas = stream.feed(tail) if tail else []
    for chunk in chunks:
        deltas += stream.feed(chunk)
    return deltas + stream.finish()


def whole_outcome(start: Expr, text: str, traced: bool) -> tuple[int, list[Event]]:
    """Match a whole text from its start: where it ends, and its events (none if it fails).
    A traced run records failures and takes no whole-parse shortcut: the general path."""
    st = MatchState(text, partial=False, traced=traced)
    end = start.match(st, 0)
    return end, (st.events if end != FAIL else [])


def expressions_in(start: Expr) -> Iterator[Expr]:
    """Every expression of a grammar, once each, shortcuts' general forms included."""
    seen: set[int] = set()
    pending = [start]
    while pending:
        expr = pending.pop()
        if id(expr) in seen:
            continue
        seen.add(id(expr))
        yield expr
        pending.extend(expr.children())
        if isinstance(expr, StandsFor):
            pending.append(expr.general_form)


def with_text_and_cut(output: str) -> list[str]:
    """The rendering, with text before it, and cut before its last closing."""
    found = [output, "Let me look that up.\n\n" + output]
    for marker in ("</", "]", "}"):
        at = output.rfind(marker)
        if at > 0:
            found.append(output[:at])
            break
    return found
