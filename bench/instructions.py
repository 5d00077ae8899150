"""Count the machine instructions of one pass of our side's stream, under callgrind.

On a shared machine, times move with the other processes' load; an instruction count does
not. Each output (a shared one by format, or a rendered pair, cut into chunks as
`bench/side_by_side.py` cuts them, folded by the client as it does) is streamed twice to warm
up, then once between valgrind's client requests (a small C shim built with the system's
compiler and `valgrind/callgrind.h` on first use): startup, imports and the grammar build are
not counted. Needs valgrind and a C compiler; each output runs in its own process under
callgrind (tens of seconds each).

Same tree twice: the same count to ~0.01%. Two trees: compare them from paths of the same
length (object addresses order some id-keyed sets and dicts; the count moved by up to 2% with
the path's length alone).

    .venv/bin/python bench/instructions.py --format qwen3-coder --pair qwen3.5 --size 16
    .venv/bin/python bench/instructions.py --format hermes-2-pro --whole
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

SHIM = r"""
#include <valgrind/callgrind.h>
void counted_start(void) { CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION;
                           CALLGRIND_TOGGLE_COLLECT; }
void counted_stop(void) { CALLGRIND_TOGGLE_COLLECT; }
"""
SHIM_DIR = Path(tempfile.gettempdir()) / "template-lab-callgrind-shim"
COLLECTED = re.compile(r"Collected : (\d+)")


def shim() -> Path:
    """Return the shared library of the two client requests, built on first use."""
    library = SHIM_DIR / "counted.so"
    if not library.exists():
        SHIM_DIR.mkdir(exist_ok=True)
        source = SHIM_DIR / "counted.c"
        source.write_text(SHIM)
        subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", str(library), str(source)],
                       check=True)
    return library


def counted_pass(name: str, size: int, whole: bool = False) -> None:
    """Stream one output (warmed up twice), the third pass between the client requests
    (whole: parse it whole, as side_by_side's whole row does, instead)."""
    from bench import generated, rendered
    from bench import side_by_side as sbs

    tools = json.loads((sbs.INPUTS / "tools.json").read_text())
    if name in generated.GRAMMARS:
        side = sbs.our_side(generated.GRAMMARS[name](tools))
        texts: tuple[str, ...] = ((sbs.INPUTS / name / "output-100k.txt").read_text(),)
        tokens: tuple[str, ...] = ()
    else:
        output = rendered.render_output(rendered.BY_NAME[name], "25k")
        side = sbs.our_side(output.parser, output.tail)
        texts, tokens = output.texts, output.special_tokens
    chunks = [sbs.chunked(text, size, tokens) for text in texts]
    def one_pass() -> None:
        if whole:
            for text in texts:
                side.whole(text)
        else:
            for each in chunks:
                side.stream(each)

    for _ in range(2):
        one_pass()
    requests = ctypes.CDLL(str(shim()))
    requests.counted_start()
    one_pass()
    requests.counted_stop()


def instructions(name: str, size: int, whole: bool = False) -> int:
    """Run one counted pass under callgrind; return the instructions it counted."""
    shim()  # built outside valgrind
    command = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--collect-atstart=no",
               "--callgrind-out-file=/dev/null", sys.executable, __file__, "--counted-pass",
               name, "--size", str(size), *(["--whole"] if whole else [])]
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO,
                          env={**os.environ, "PYTHONHASHSEED": "0"})
    found = COLLECTED.search(done.stderr)
    if done.returncode or not found or found.group(1) == "0":
        raise RuntimeError(f"{name}: no count from callgrind\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--format", action="append", default=[], help="a shared output")
    parser.add_argument("--pair", action="append", default=[], help="a rendered pair")
    parser.add_argument("--size", type=int, default=16, help="chunk size (characters)")
    parser.add_argument("--whole", action="store_true", help="count a whole parse instead")
    parser.add_argument("--counted-pass", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.counted_pass:
        counted_pass(args.counted_pass, args.size, args.whole)
        return
    shape = "whole parse" if args.whole else f"{args.size}-byte stream"
    for name in args.format + args.pair:
        count = instructions(name, args.size, args.whole)
        print(f"{name} {shape}: {count:,} instructions", flush=True)


if __name__ == "__main__":
    main()
