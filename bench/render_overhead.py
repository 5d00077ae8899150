"""Measure what the render limits cost: our bounded render vs transformers' unbounded one.

Usage: .venv/bin/python bench/render_overhead.py [--all | TEMPLATE.jinja ...]
(defaults to a few corpus templates in ../shared/corpus/templates; --all: the whole corpus)
"""

from __future__ import annotations

import statistics
import sys
import timeit
from pathlib import Path
from typing import Any

from transformers.utils.chat_template_utils import _compile_jinja_template

from analyzer.render.limits import budget_for
from analyzer.render.template import ChatTemplate, template_context

CORPUS = Path(__file__).resolve().parents[1] / ".." / "shared" / "corpus" / "templates"
DEFAULT = ["Qwen-Qwen3-0.6B", "meta-llama-Llama-3.1-8B-Instruct", "openai-gpt-oss-120b",
           "deepseek-ai-DeepSeek-V3.1", "mistralai-Mistral-Nemo-Instruct-2407"]
TOOL = {"type": "function", "function": {"name": "get_weather", "description": "Weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}
CALL = {"id": "call12345", "type": "function",
        "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
MESSAGES = [
    {"role": "system", "content": "Be terse."},
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": "", "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "call12345", "content": '{"sky": "clear"}'},
    {"role": "assistant", "content": "Clear."},
]


def best_of(*fns: Any, number: int = 20, rounds: int = 40) -> list[float]:
    """Time the functions in alternation (fair under noisy neighbours); best µs per call each."""
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            best[i] = min(best[i], timeit.timeit(fn, number=number) / number * 1e6)
    return best


def measure(path: Path) -> tuple[float, float, float]:
    source = path.read_text(encoding="utf-8")
    ours = ChatTemplate(source, bos_token="<s>", eos_token="</s>")
    made: dict[int, Any] = {}
    tokens = {"bos_token": "<s>", "eos_token": "</s>"}
    context = template_context(MESSAGES, [TOOL], None, True, tokens, made)
    theirs = _compile_jinja_template(source)

    def bounded() -> str:
        with budget_for(ours.limits, made):
            return ours._template.render(context)

    def full() -> str:
        return ours.render(MESSAGES, tools=[TOOL], add_generation_prompt=True)

    hf, bounded_us, full_us = best_of(lambda: theirs.render(context), bounded, full)
    return hf, bounded_us, full_us


def main(argv: list[str]) -> None:
    if argv == ["--all"]:
        paths = sorted(CORPUS.glob("*.jinja"))
    else:
        paths = [Path(a) for a in argv] or [CORPUS / f"{name}.jinja" for name in DEFAULT]
    print(f"{'template':42s} {'hf µs':>8s} {'ours µs':>8s} {'overhead':>9s} {'render() µs':>11s}")
    extra, ratios = [], []
    for path in paths:
        try:
            hf, ours, full = measure(path)
        except Exception as exc:  # noqa: BLE001 - a template may refuse the bench conversation
            print(f"{path.stem[:42]:42s} refused: {type(exc).__name__}")
            continue
        extra.append(ours - hf)
        ratios.append(ours / hf - 1)
        print(f"{path.stem[:42]:42s} {hf:8.1f} {ours:8.1f} {ours - hf:+8.1f} {full:11.1f}")
    if extra:
        print(f"median overhead {statistics.median(extra):+.1f} µs"
              f" ({statistics.median(ratios):+.0%}) over {len(extra)} templates")


if __name__ == "__main__":
    main(sys.argv[1:])
