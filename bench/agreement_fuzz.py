"""Stream and one-shot parses of broken outputs must agree, and lose no text: a seeded fuzz.

Every corpus template with a generated parser renders one search_records(query, city) call
(the way `analyzer.checks.verify` renders its cases); each output is that rendering with 1-3
random edits (a markup character inserted, characters deleted, a piece duplicated), parsed
one-shot (`parse_report`) and streamed in random chunkings. A case fails when

- a stream's message (content, reasoning, calls) differs from the one-shot message,
- a stream's deviations differ in kind, action or offset (their `expected` wording is not
  compared: it names what the failing run wanted, which depends on where that run began),
- the one-shot message loses text (`lost_words`) where it reports no text dropped (a
  DROPPED deviation says so: an arguments object under an unknown key, a call object's
  member the template does not write, a call cut off before its name).

    .venv/bin/python -m bench.agreement_fuzz [--outputs 40] [--chunkings 3] [--seed 0]

prints the counts by cause and the first cases of each. tests/analyzer/parsing/
test_agreement_fuzz.py runs a small version.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from analyzer.analysis.pipeline import analyze, compiled
from analyzer.checks.verify import Case, Subject, call, render_case, required_kwargs
from analyzer.generator import GeneratedParser, generate_parser
from analyzer.parsing.deviations import DeviationAction
from analyzer.parsing.message import Message
from analyzer.parsing.stream import accumulate
from analyzer.render.loading import load_template_file

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus" / "templates"
FORMATS = REPO / "templates_corpus" / "formats"
ARGUMENTS = {"query": "hotels", "city": "Paris"}
NAME = "search_records"
WORD = re.compile(r"\w+")


@cache
def rendered_call(path: Path) -> tuple[GeneratedParser, str] | None:
    """The generated parser for the template's rendering of the call, and that rendering
    (None: no generated parser, or the template cannot render the call)."""
    loaded = load_template_file(path)
    analysis = analyze(loaded)
    if analysis.handler != "auto":
        return None
    chat = compiled(loaded.source, loaded.bos_token, loaded.eos_token, analysis.render_mode)
    subject = Subject(analysis, chat, required_kwargs(chat, analysis))
    result = render_case(subject, Case("two", Message(tool_calls=(call(NAME, ARGUMENTS),))))
    if isinstance(result, str):
        return None
    return generate_parser(analysis, result.options, prompt=result.prompt), result.output


def template_paths() -> list[Path]:
    """Our format templates, then the shared corpus when it is there."""
    return sorted(FORMATS.glob("*.jinja")) + sorted(CORPUS.glob("*.jinja"))


def edited(rendering: str, rng: random.Random) -> str:
    """The rendering with 1-3 edits: a markup character (one the rendering writes, not a
    letter, digit or space) inserted, 1-3 characters deleted, or a piece duplicated."""
    markup = sorted({c for c in rendering if not c.isalnum() and not c.isspace()}) or ["<"]
    text = rendering
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(text) + 1)
        kind = rng.randrange(3)
        if kind == 0:
            text = text[:at] + rng.choice(markup) + text[at:]
        elif kind == 1:
            text = text[:at] + text[at + rng.randint(1, 3):]
        else:
            piece = text[at:at + rng.randint(1, 12)]
            text = text[:at] + piece + text[at:]
    return text


def chunks(text: str, rng: random.Random) -> list[str]:
    """Text cut at random places (pieces of 1 to 12 characters)."""
    pieces, at = [], 0
    while at < len(text):
        size = rng.randint(1, 12)
        pieces.append(text[at:at + size])
        at += size
    return pieces


def values(value: Any) -> Iterator[str]:
    """Every key and scalar of a JSON value, as text."""
    if isinstance(value, dict):
        for key, item in value:  # pairs: duplicate keys all count
            yield key
            yield from values(item)
    elif isinstance(value, list):
        for item in value:
            yield from values(item)
    elif value is not None:
        yield value if isinstance(value, str) else json.dumps(value)


def decoded(arguments: str) -> list[str]:
    """A call's argument keys and values (its text when it is not JSON)."""
    try:
        found = json.loads(arguments, object_pairs_hook=list)
    except ValueError:
        return [arguments]
    return list(values(found))


def accounted(message: Message) -> str:
    """The message's text: content, reasoning, each call's name, id, argument keys and
    values."""
    pieces = [message.content, message.reasoning_content]
    for tool_call in message.tool_calls:
        pieces += [tool_call.name, tool_call.id, *decoded(tool_call.arguments)]
    return "\n".join(pieces)


def markup_words(rendering: str, prompt_tail: str, clean: Message) -> frozenset[str]:
    """The words the template writes as markup: those of the prompt's tail, and those the
    rendering writes more often than its parse's message holds them (`<city>` and `</city>`
    around a value, a key the JSON body names: `"arguments"`)."""
    text = accounted(clean)
    words = Counter(WORD.findall(rendering))
    return frozenset({*WORD.findall(prompt_tail),
                      *(word for word, count in words.items() if count > text.count(word))})


def lost_words(output: str, markup: frozenset[str], message: Message) -> list[str]:
    """The words (runs of \\w) of the output that the message does not account for.

    A word of the template's markup may be markup the grammar read as such; every other
    word, the data's and any an edit made (`hoy` of `ho'y'tels`, `Paris` cut to `Par`), must
    occur in the message's text as often as in the output (`accounted`, as a substring: a
    word split or glued to another by markup the grammar read still counts; a word lost
    whole never does). A word glued to a markup word (` ffunctools` for ` functools`) is
    checked without it."""
    text = accounted(message)
    glued = re.compile("|".join(sorted(map(re.escape, markup), key=len, reverse=True)) or "$^")
    wanted: Counter[str] = Counter()
    for word in WORD.findall(output):
        if word in markup:
            continue
        pieces = [word] if word in text else [p for p in glued.split(word) if p]
        wanted.update(pieces)
    return sorted(word for word, count in wanted.items() if text.count(word) < count)


@dataclass(frozen=True)
class Failure:
    """One case that failed, and why."""

    template: str
    output: str
    cause: str
    detail: str


def check(name: str, parser: GeneratedParser, rendering: str, output: str,
          chunkings: list[list[str]]) -> list[Failure]:
    """Check one output one-shot against each chunking; return its failures."""
    report = parser.parse_report(output)
    failures = []
    markup = markup_words(rendering, parser.prompt.tail, parser.parse(rendering))
    dropped = any(d.action == DeviationAction.DROPPED for d in report.deviations)
    lost = [] if dropped else lost_words(output, markup, report.message)
    if lost:
        failures.append(Failure(name, output, "text lost one-shot", f"{lost} {report.message}"))
    summary = [(d.kind, d.action, d.offset) for d in report.deviations]
    for pieces in chunkings:
        stream = parser.stream()
        deltas = [delta for piece in pieces for delta in stream.feed(piece)] + stream.finish()
        message = accumulate(deltas)
        if message != report.message:
            fields = [f for f in ("content", "reasoning_content", "tool_calls")
                      if getattr(message, f) != getattr(report.message, f)]
            failures.append(Failure(name, output, "message: " + ", ".join(fields),
                                    f"stream {message}\n    one-shot {report.message}\n"
                                    f"    chunks {pieces}"))
        streamed = [(d.kind, d.action, d.offset) for d in stream.deviations]
        if streamed != summary:
            failures.append(Failure(name, output, "deviations", f"stream {streamed}\n    "
                                    f"one-shot {summary}\n    chunks {pieces}"))
    return failures


def fuzz(paths: list[Path], outputs: int, chunkings: int, seed: int
         ) -> tuple[int, list[Failure]]:
    """Run outputs edited outputs times chunkings streams per template; return the number
    of cases (one chunking of one output) and the failures."""
    cases, failures = 0, []
    for path in paths:
        found = rendered_call(path)
        if found is None:
            continue
        parser, rendering = found
        rng = random.Random(f"{seed}:{path.stem}")  # a template's cases do not move with others
        for _ in range(outputs):
            output = edited(rendering, rng)
            splits = [chunks(output, rng) for _ in range(chunkings)]
            failures += check(path.stem, parser, rendering, output, splits)
            cases += chunkings
    return cases, failures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--outputs", type=int, default=40, help="edited outputs per template")
    parser.add_argument("--chunkings", type=int, default=3, help="chunkings per output")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=3, help="cases shown per cause")
    args = parser.parse_args()
    paths = template_paths()
    cases, failures = fuzz(paths, args.outputs, args.chunkings, args.seed)
    causes = Counter(failure.cause for failure in failures)
    print(f"{len(paths)} templates, {cases} cases (outputs x chunkings), "
          f"{len(failures)} failures")
    for cause, count in causes.most_common():
        print(f"  {count:5}  {cause}")
    for cause in causes:
        print(f"\n== {cause}")
        for failure in [f for f in failures if f.cause == cause][:args.show]:
            print(f"  {failure.template}: {failure.output!r}\n    {failure.detail}")


if __name__ == "__main__":
    main()
