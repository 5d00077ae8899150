"""Count a stream's runs of the grammar that give nothing, and what they cost.

For each output (a shared one by format, or a rendered pair, as `bench/side_by_side.py` cuts
them into chunks), stream it and count the chunks, the runs (chunks the stream did not skip),
and the empty runs: those that make no event final and give no delta. An empty run could have
been skipped, so the time those runs take (CPU time, best of --rounds) bounds what a skip
could save. The empty runs are grouped by where they stop: the leaf that waited and
what the previous chunk's skip test had to say (`StreamParser.quiet`).

    .venv/bin/python bench/empty_runs.py --format qwen3-coder --pair qwen3.5 --pair kimi-k2
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analyzer.parsing.deltas import Delta  # noqa: E402
from analyzer.parsing.stream import HELD, UNKNOWN, StreamParser  # noqa: E402
from analyzer.peg import Parser  # noqa: E402
from analyzer.peg.state import MatchState  # noqa: E402
from bench import generated, rendered  # noqa: E402
from bench.side_by_side import INPUTS, chunked  # noqa: E402


def quiet_kind(stream: StreamParser, chunk: str) -> str:
    """Say what the stream's skip test knew before the chunk: no test, or its leaf and what
    the leaf answered on the longer text."""
    if stream.quiet is None:
        return "no skip test"
    waiting, at, captured, _, _, _, _ = stream.quiet
    leaf = type(waiting).__name__
    if waiting.moves:
        return f"{leaf} (moves)"
    end = waiting.waiting_end(stream.buffer + chunk, at)
    said = "decides" if end < 0 else "waits" if end == at else "reads on"
    capture = ("unseen" if captured is UNKNOWN else "held" if captured is HELD
               else "none" if captured is None else "a capture")
    return f"{leaf} {said}, {capture}"


class Counting(StreamParser):
    """A stream that counts its runs and its empty runs, and times them."""

    def __init__(self, parser: Parser) -> None:
        super().__init__(parser)
        self.runs = self.empty = 0
        self.seconds = {"empty": 0.0, "other": 0.0}
        self.stops: Counter[tuple[str, str]] = Counter()
        self.before = ""
        # The state the last run left (not `state`: StreamParser keeps the state it reruns there)
        self.seen: MatchState | None = None

    def feed(self, chunk: str) -> list[Delta]:
        self.before, self.seen = quiet_kind(self, chunk), None
        return super().feed(chunk)

    def _advance(self, partial: bool) -> list[Delta]:
        started = time.process_time()
        deltas = super()._advance(partial)
        seconds = time.process_time() - started
        state = self.seen
        empty = partial and not deltas and state is not None and not state.commit_events
        self.runs += 1
        self.seconds["empty" if empty else "other"] += seconds
        if empty:
            assert state is not None
            self.empty += 1
            self.stops[(type(state.leaf).__name__, self.before)] += 1
        return deltas

    def _steady_of(self, leaf: Any, events: Any, commit: int, resume_pos: int, need_end: int,
                   resume: Any, shaky: bool) -> Any:
        # A run's fields as a state (a decided run fills none: `StreamParser._steady_of`)
        seen = self.seen = MatchState("", True, traced=False)
        seen.leaf, seen.commit_events = leaf, commit
        return super()._steady_of(leaf, events, commit, resume_pos, need_end, resume, shaky)


def measure(label: str, parser: Parser, texts: tuple[str, ...], tail: str,
            tokens: tuple[str, ...], rounds: int) -> list[str]:
    """Stream each text in 16-byte chunks; return the report's lines for one output."""
    chunks = [chunked(text, 16, tokens) for text in texts]
    best: dict[str, float] = {}
    for _ in range(rounds):
        streams = []
        started = time.process_time()
        for pieces in chunks:
            stream = Counting(parser)
            for piece in ([tail] if tail else []) + pieces:
                stream.feed(piece)
            stream.finish()
            streams.append(stream)
        whole = time.process_time() - started
        best["stream"] = min(best.get("stream", whole), whole)
        for kind in ("empty", "other"):
            seconds = sum(stream.seconds[kind] for stream in streams)
            best[kind] = min(best.get(kind, seconds), seconds)
    runs = sum(stream.runs for stream in streams)
    empty = sum(stream.empty for stream in streams)
    stops: Counter[tuple[str, str]] = sum((stream.stops for stream in streams), Counter())
    lines = [f"{label}: {sum(map(len, chunks))} chunks, {runs} runs, {empty} empty; runs take "
             f"{best['empty'] * 1e3:.1f} ms (empty) + {best['other'] * 1e3:.1f} ms (others) of "
             f"{best['stream'] * 1e3:.1f} ms streaming (timers included)"]
    lines += [f"    {count:5} stop at {leaf} after: {before}"
              for (leaf, before), count in stops.most_common(6)]
    return lines


def main() -> int:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--format", choices=generated.FORMATS, action="append", default=[])
    options.add_argument("--pair", choices=tuple(rendered.BY_NAME), action="append", default=[])
    options.add_argument("--size", choices=("25k", "50k", "100k"), default="100k")
    options.add_argument("--rendered-size", choices=tuple(rendered.SIZES), default="25k")
    options.add_argument("--rounds", type=int, default=3, help="timed rounds (best kept)")
    args = options.parse_args()
    tools = json.loads((INPUTS / "tools.json").read_text(encoding="utf-8"))
    for name in args.format:
        text = (INPUTS / name / f"output-{args.size}.txt").read_text(encoding="utf-8")
        for line in measure(f"{name} {args.size}", generated.GRAMMARS[name](tools), (text,),
                            "", (), args.rounds):
            print(line, flush=True)
    for name in args.pair:
        output = rendered.render_output(rendered.BY_NAME[name], args.rendered_size)
        for line in measure(f"{name} {args.rendered_size}", output.parser, output.texts,
                            output.tail, output.special_tokens, args.rounds):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
