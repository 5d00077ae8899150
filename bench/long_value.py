"""One Qwen3-Coder call whose `content` value is long, streamed in 16-byte chunks: ours against
SGLang's detector (CPU seconds, best of 3), at several value sizes.

A detector that buffers a parameter until its closing tag re-reads the pending value at every
chunk; a stream that sends the value as it comes does not. T(100 KB) / T(50 KB) shows which
side stays linear. Needs the bench-peers extra (see bench/README.md).

    .venv/bin/python bench/long_value.py [--sizes 25,50,100,200]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import generated, peers  # noqa: E402
from bench import side_by_side as sbs  # noqa: E402

LINE = 'def f(x):\n    return json.dumps({"a": x, "b": "<b>"})  # tag-like <text> here\n'


def output(kilobytes: int) -> str:
    """A write_file call whose content is kilobytes KB of code (with `<` in it)."""
    body = (LINE * (kilobytes * 1024 // len(LINE) + 1))[: kilobytes * 1024]
    return ("<tool_call>\n<function=write_file>\n<parameter=path>\na.py\n</parameter>\n"
            f"<parameter=content>\n{body}\n</parameter>\n</function>\n</tool_call>")


def best_stream(side: peers.Peer, chunks: list[str]) -> tuple[float, peers.Calls]:
    """The best of three streams' CPU seconds, and the calls the side read."""
    best, result = float("inf"), None
    for _ in range(3):
        started = time.process_time()
        result = side.stream(chunks)
        best = min(best, time.process_time() - started)
    return best, side.calls(result)


def main() -> int:
    options = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    options.add_argument("--sizes", default="25,50,100,200", help="value sizes in KB")
    args = options.parse_args()
    tools = json.loads((sbs.INPUTS / "tools.json").read_text(encoding="utf-8"))
    ours = sbs.our_side(generated.GRAMMARS["qwen3-coder"](tools))
    try:
        theirs = peers.sglang_peers(tools)["qwen3-coder"]
    except ImportError as missing:
        print(f"needs SGLang's detectors: {missing}", file=sys.stderr)
        return 2
    print("| value | ours | SGLang | SGLang time / ours |\n|---|---|---|---|")
    for kilobytes in map(int, args.sizes.split(",")):
        chunks = sbs.chunked(output(kilobytes), 16)
        (mine, my_calls), (their, their_calls) = (best_stream(side, chunks)
                                                  for side in (ours, theirs))
        same = "" if my_calls == their_calls else " (calls differ)"
        print(f"| {kilobytes} KB | {mine:.4f} s | {their:.4f} s | {their / mine:.1f}x{same} |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
