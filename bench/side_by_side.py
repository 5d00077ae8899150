"""Side by side: our generated parsers against SGLang's detectors, same bytes, one process.

Run from the repo root: `.venv/bin/python bench/side_by_side.py [--size 100k] [--rounds 5]`.
For each benchmark format SGLang has a detector for, on `../shared/bench-inputs/<format>/
output-<size>.txt`: the whole parse (ours: parse + mapping to an OpenAI message) and streams in
16-byte and 1-byte chunks (ours: deltas folded by a client-side Accumulator; SGLang's: its call
items joined per tool index). The two sides take turns within each round, so a change in the
machine's load hits both alike (who goes first alternates by round), after one untimed
turn of each (a warm-up: ours learns its regexes on the first stream); each cell is the best
round, in CPU seconds of this process. The ratio is the best rounds' ratio, with the median of
the rounds' ratios beside it (a turn of each side, paired in order): a margin the median keeps
holds on a loaded machine too.
Both sides' calls (names, JSON-equal arguments) must equal each other and `expected-*.json`;
reading them for that check is not timed.
Without SGLang installed (the optional `bench-peers` extra) its column is skipped.

Then every (SGLang detector, corpus template) pair of `bench/rendered.py` (`--pair` selects;
outputs rendered through the template at `--rendered-size`, 25k by default), the same way,
against the calls rendered. A side that extracts other calls is reported per pair (which side,
and how it differs) instead of timed against the other: where SGLang's detector cannot read
the template's own rendering, that is a format drift between the two, and the row says so.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from analyzer.parsing.mapper import to_message  # noqa: E402
from analyzer.parsing.message import Message  # noqa: E402
from analyzer.parsing.stream import Accumulator, StreamParser  # noqa: E402
from analyzer.peg import Parser  # noqa: E402
from bench import generated, peers, rendered  # noqa: E402

INPUTS = REPO / ".." / "shared" / "bench-inputs"
SHAPES = ("whole", "16-byte stream", "1-byte stream")
STREAM_SIZES = {"16-byte stream": 16, "1-byte stream": 1}
WHOLE_REPEATS = 10
clock = time.process_time  # the machine is shared: wall time would count other processes


def calls_of(message: Message) -> peers.Calls:
    """Return a message's calls in the form both sides are compared in."""
    return peers.Calls(tuple((c.name, json.loads(c.arguments)) for c in message.tool_calls))


def our_side(parser: Parser, tail: str = "") -> peers.Peer:
    """Wrap our parser like a peer: one-shot parse, and a stream folded by a client.

    tail: what the generation prompt leaves for the parser to read before the output (an
    opened reasoning block); read first, as `GeneratedParser` does."""

    def whole(text: str) -> Message:
        return to_message(parser.parse(tail + text))

    def stream(chunks: Iterable[str]) -> Message:
        streamer, client = StreamParser(parser), Accumulator()
        for chunk in ([tail] if tail else []) + list(chunks):
            for delta in streamer.feed(chunk):
                client.add(delta)
        for delta in streamer.finish():
            client.add(delta)
        return client.message()

    def pieces(chunks: Iterable[str]) -> int:
        streamer = StreamParser(parser)
        deltas = [delta for chunk in ([tail] if tail else []) + list(chunks)
                  for delta in streamer.feed(chunk)] + streamer.finish()
        return sum(1 for delta in deltas for call in delta.tool_calls if call.arguments)

    return peers.Peer("ours", whole, stream, calls_of, pieces)


def timed(work: Callable[[], Any], calls: Callable[[Any], peers.Calls]) -> tuple[
        float, peers.Calls]:
    """Run work once; return its CPU seconds and the calls of its result (read untimed)."""
    started = clock()
    result = work()
    return clock() - started, calls(result)


def chunked(text: str, size: int, tokens: tuple[str, ...] = ()) -> list[str]:
    """Cut text in chunks of size characters, a special token never split (a server's chunks
    are whole tokens; SGLang's detectors read a split one as text)."""
    found = re.finditer("|".join(map(re.escape, sorted(tokens, key=len, reverse=True))),
                        text) if tokens else iter(())
    spans = [match.span() for match in found]
    chunks, at, index = [], 0, 0
    while at < len(text):
        end = min(at + size, len(text))
        while index < len(spans) and spans[index][1] <= end:
            index += 1
        if index < len(spans) and spans[index][0] < end:
            end = spans[index][1]
        chunks.append(text[at:end])
        at = end
    return chunks


def shape_runs(side: peers.Peer, texts: tuple[str, ...],
               tokens: tuple[str, ...] = ()) -> dict[str, Callable[[], Any]]:
    """Return the three timed shapes for one side (chunks cut before timing); several texts
    are separate outputs, each parsed (or streamed) from a fresh start."""
    chunks16 = [chunked(text, 16, tokens) for text in texts]
    chunks1 = [chunked(text, 1, tokens) for text in texts]
    return {
        "whole": lambda: [side.whole(text) for text in texts],
        "16-byte stream": lambda: [side.stream(chunks) for chunks in chunks16],
        "1-byte stream": lambda: [side.stream(chunks) for chunks in chunks1],
    }


def joined_calls(side: peers.Peer) -> Callable[[list[Any]], peers.Calls]:
    """Read the calls of every output's result, in order; a failing read is a result too."""

    def calls(results: list[Any]) -> peers.Calls:
        items: list[tuple[str, Any]] = []
        for result in results:
            try:
                items += side.calls(result).items
            except Exception as exc:  # noqa: BLE001 - a broken call is a finding, not a stop
                items.append(("<unreadable>", f"{type(exc).__name__}: {exc}"))
        return peers.Calls(tuple(items))

    return calls


def compare(sides: list[peers.Peer], texts: tuple[str, ...], rounds: int,
            tokens: tuple[str, ...] = ()) -> dict[tuple[str, str], Any]:
    """Time every side on every shape, taking turns; return per cell the best seconds, the
    calls of that run, and every round's seconds (for the median ratio)."""
    runs = {side.name: shape_runs(side, texts, tokens) for side in sides}
    readers = {side.name: joined_calls(side) for side in sides}
    # One untimed turn of every side on every shape first: a server runs many requests, and
    # the first one pays what later ones reuse (ours builds its resume points' regexes once
    # they are met often: a fresh process's first Qwen3-Coder 100 KB stream at 16 bytes
    # costs about twice a later one; SGLang's first call builds its own caches too).
    for shape in SHAPES:
        for side in sides:
            runs[side.name][shape]()
    best: dict[tuple[str, str], Any] = {}
    for round_ in range(rounds):
        # Who goes first alternates: the side that runs right after the other may find the
        # caches or the clock's frequency in another state.
        order = sides if round_ % 2 == 0 else sides[::-1]
        for shape in SHAPES:
            # A whole parse takes milliseconds: several per round, or the machine's noise
            # outweighs the difference.
            for side in order * (WHOLE_REPEATS if shape == "whole" else 1):
                seconds, calls = timed(runs[side.name][shape], readers[side.name])
                key = (side.name, shape)
                if key not in best:
                    best[key] = (seconds, calls, [])
                elif seconds < best[key][0]:
                    best[key] = (seconds, calls, best[key][2])
                best[key][2].append(seconds)
    return best


def median_ratio(theirs: list[float], ours: list[float]) -> float:
    """Return the median of the per-round ratios (their time / ours, turns paired in order)."""
    return statistics.median(a / b for a, b in zip(theirs, ours, strict=True))


def expected_calls(name: str, size: str) -> peers.Calls:
    """Read the calls an output holds from its expected-*.json."""
    expected = json.loads((INPUTS / name / f"expected-{size}.json").read_text("utf-8"))
    return peers.Calls(tuple((c["name"], c["arguments"]) for c in expected["tool_calls"]))


def rows(label: str, sides: list[peers.Peer], texts: tuple[str, ...], want: peers.Calls,
         rounds: int, columns: int, tokens: tuple[str, ...] = ()) -> list[str]:
    """Measure one output; return its table rows (markdown), with `columns` side columns.

    A side whose calls differ from `want` gets no ratio: the row says which side and how.
    tokens: special tokens the stream's chunks keep whole."""
    best = compare(sides, texts, rounds, tokens)
    size = sum(len(text.encode()) for text in texts)
    lines = []
    for shape in SHAPES:
        cells = [label, shape]
        for side in sides:
            seconds, calls, _ = best[(side.name, shape)]
            speed = f" ({size / seconds / 1e6:.1f} MB/s)" if shape == "whole" else ""
            cells.append(f"{seconds:.4f} s{speed}")
        wrong = {side.name: difference(best[(side.name, shape)][1], want) for side in sides}
        if len(sides) > 1:
            theirs, ours = best[(sides[1].name, shape)], best[(sides[0].name, shape)]
            middle = median_ratio(theirs[2], ours[2])
            cells.append("–" if any(wrong.values()) else
                         f"{theirs[0] / ours[0]:.2f}x (median {middle:.2f}x)")
        elif columns > 1:
            cells += ["no SGLang detector for this format", "–"]
        found = "; ".join(f"{'ours' if name == sides[0].name else 'SGLang'} DIFFERENT: {why}"
                          for name, why in wrong.items() if why)
        sent = "" if shape == "whole" else "; argument pieces sent: " + " / ".join(
            f"{sent_pieces(side, texts, STREAM_SIZES[shape], tokens):,}" for side in sides)
        cells.append(f"{len(want.items)} calls, " + (found or "same") + sent)
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def sent_pieces(side: peers.Peer, texts: tuple[str, ...], size: int,
                tokens: tuple[str, ...]) -> int:
    """How many pieces of arguments text one side sends, streaming every output (untimed)."""
    return sum(side.pieces(chunked(text, size, tokens)) for text in texts)


def difference(got: peers.Calls, want: peers.Calls) -> str:
    """Say how a side's calls differ from the expected ones ("" when they are equal)."""
    if got == want:
        return ""
    for index, (mine, theirs) in enumerate(zip(got.items, want.items, strict=False)):
        if mine != theirs:
            return (f"{len(got.items)} of {len(want.items)} calls; call {index} "
                    f"(`{theirs[0]}`) differs: {where(mine, theirs)}")
    return f"{len(got.items)} of {len(want.items)} calls (those equal)"


def where(mine: tuple[str, Any], theirs: tuple[str, Any]) -> str:
    """Show where two calls' JSON first differ (a few characters of each around it)."""
    got, want = (json.dumps(list(call), ensure_ascii=False) for call in (mine, theirs))
    at = next((i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b),
              min(len(got), len(want)))
    start = max(0, at - 12)
    return (f"`...{got[start : at + 16]}...` instead of `...{want[start : at + 16]}...`"
            .replace("|", "\\|").replace("\n", " "))


def shared_rows(name: str, sides: list[peers.Peer], size: str, rounds: int,
                columns: int) -> list[str]:
    """Measure one benchmark format on its shared output."""
    text = (INPUTS / name / f"output-{size}.txt").read_text(encoding="utf-8")
    return rows(f"{name} {size}", sides, (text,), expected_calls(name, size), rounds, columns)


def rendered_rows(pair: rendered.Pair, tools: list[Any], size: str, rounds: int,
                  with_sglang: bool) -> list[str]:
    """Measure one (SGLang detector, corpus template) pair on its rendered output."""
    label = f"{pair.name} {size} (`{pair.template}`)"
    try:
        output = rendered.render_output(pair, size)
    except rendered.NotRendered as why:
        return [f"| {label} | – | not rendered: {str(why)[:300]} |"]
    sides = [our_side(output.parser, output.tail)]
    if with_sglang:
        vocabulary = output.special_tokens if pair.vocabulary else ()
        try:
            sides.append(peers.sglang_peer(*pair.detector, tools, vocabulary))
        except ImportError as missing:
            return [f"| {label} | – | SGLang's {pair.detector[1]} not importable: {missing} |"]
    if len(output.texts) > 1:
        label += f", {len(output.texts)} one-call outputs"
    return rows(label, sides, output.texts, peers.Calls(output.calls), rounds,
                1 + with_sglang, output.special_tokens)


def main() -> int:
    """Print the side-by-side table."""
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--size", choices=("25k", "50k", "100k"), default="100k",
                         help="size of the shared outputs")
    options.add_argument("--rendered-size", choices=tuple(rendered.SIZES), default="25k",
                         help="size of the outputs rendered through corpus templates")
    options.add_argument("--rounds", type=int, default=5, help="timed rounds (best kept)")
    options.add_argument("--format", choices=generated.FORMATS, action="append",
                         help="a shared-output format (default: all, unless --pair is given)")
    options.add_argument("--pair", choices=tuple(rendered.BY_NAME), action="append",
                         help="a rendered pair (default: all, unless --format is given)")
    args = options.parse_args()
    if not INPUTS.is_dir():
        print(f"bench inputs not found at {INPUTS}", file=sys.stderr)
        return 2
    tools = json.loads((INPUTS / "tools.json").read_text(encoding="utf-8"))
    try:
        others = peers.sglang_peers(tools)
    except ImportError as missing:
        print(f"SGLang column skipped: {missing} (pip install '.[bench-peers]', then "
              "pip install --no-deps sglang==0.5.23; see bench/README.md)", file=sys.stderr)
        others = {}
    ratio = "SGLang time / ours, best (median of rounds)"
    header = ["output", "shape", "ours"] + (["SGLang", ratio] if others else [])
    print("| " + " | ".join([*header, "calls"]) + " |")
    print("|" + "---|" * (len(header) + 1))
    formats = args.format or ([] if args.pair else list(generated.FORMATS))
    for name in formats:
        sides = [our_side(generated.GRAMMARS[name](tools))]
        if name in others:
            sides.append(others[name])
        for line in shared_rows(name, sides, args.size, args.rounds, 1 + bool(others)):
            print(line, flush=True)
    pairs = args.pair or ([] if args.format else list(rendered.BY_NAME))
    for name in pairs:
        for line in rendered_rows(rendered.BY_NAME[name], tools, args.rendered_size,
                                  args.rounds, bool(others)):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
