"""Time GBNF grammar builds over the corpus and count how the literals are spelled.

Usage: .venv/bin/python bench/grammar_bench.py [--repeats N]
(every template in ../shared/corpus/templates with a tool-call format; analyses are warmed
first, as in the lab, where a template's analysis is stored before its grammar is built)

Each template's grammar is built for the request shapes `verify` checks: tool_choice
"required" and "auto", parallel calls off and on, with verify's tools. Prints the CPU seconds
of this process for all builds (best of N rounds), the slowest template's share, the
grammars' total size, and how many literals are one character long: once as built, once with
every marker spelled one character per literal (`GrammarBuilder(join=False)`, the grammars
before runs of literals were joined), the two timed in turns so the machine's load hits both.
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

from analyzer.analysis.pipeline import analyze
from analyzer.checks.verify import TOOLS
from analyzer.errors import AnalyzerError
from analyzer.gbnf import build_tool_grammar
from analyzer.gbnf.builder import GrammarBuilder
from analyzer.model import Analysis, ToolFormat
from analyzer.render.loading import load_template_file

CORPUS = Path(__file__).resolve().parents[1] / ".." / "shared" / "corpus" / "templates"
SHAPES = [(mode, parallel) for mode in ("required", "auto") for parallel in (False, True)]
# A literal or a character class (a class may hold a '"' that is no literal).
_ATOM = re.compile(r'"(?:\\.|[^"\\])*"|\[(?:\\.|[^\]\\])*\]')
_ONE_CHAR = re.compile(r'"(?:\\x[0-9a-fA-F]{2}|\\.|[^"\\])"')


def build_all(analysis: Analysis, *, join: bool) -> list[str]:
    """The grammars of every request shape the template supports."""
    grammars = []
    for mode, parallel in SHAPES:
        try:
            result = build_tool_grammar(analysis, list(TOOLS), tool_choice=mode,
                                        parallel_tool_calls=parallel,
                                        builder=GrammarBuilder(join=join))
        except AnalyzerError:
            continue
        if result.grammar:
            grammars.append(result.grammar)
    return grammars


def one_char_literals(grammar: str) -> int:
    """Count the literals that spell a single character."""
    return sum(1 for atom in _ATOM.findall(grammar) if _ONE_CHAR.fullmatch(atom))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    analyses = {path.stem: analyze(load_template_file(path))
                for path in sorted(CORPUS.glob("*.jinja"))}
    analyses = {name: a for name, a in analyses.items()
                if a.tools.format.mode != ToolFormat.NONE}
    best: dict[bool, dict[str, float]] = {False: {}, True: {}}
    for _ in range(args.repeats):  # spelled and joined in turns: the load hits both alike
        for join, times in best.items():
            for name, analysis in analyses.items():
                start = time.process_time()
                build_all(analysis, join=join)
                spent = time.process_time() - start
                times[name] = min(spent, times.get(name, spent))
    for join, times in best.items():
        report(analyses, times, join=join, repeats=args.repeats)


def report(analyses: dict[str, Analysis], best: dict[str, float], *, join: bool,
           repeats: int) -> None:
    """Print the build times and the grammars' size and one-character literals."""
    grammars = [g for a in analyses.values() for g in build_all(a, join=join)]
    slowest = max(best, key=lambda name: best[name])
    print(f"{'joined' if join else 'spelled'}: {len(analyses)} templates, "
          f"{len(grammars)} grammars")
    print(f"  build CPU {sum(best.values()):.3f} s (best of {repeats} per template), "
          f"{sum(best.values()) / len(grammars) * 1000:.2f} ms per grammar, slowest "
          f"{slowest} {best[slowest] * 1000:.1f} ms for its {len(SHAPES)} shapes")
    print(f"  bytes {sum(len(g.encode()) for g in grammars):,}, one-character literals "
          f"{sum(one_char_literals(g) for g in grammars):,}")

if __name__ == "__main__":
    main()
