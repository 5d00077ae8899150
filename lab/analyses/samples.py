"""The live textbox's sample: a realistic model output rendered by the template itself.

The analysis rendered its variant pairs with probe names (`fa_lookup_one(pa_city=XXXX)`), which
read as noise to a new user. The sample renders the same pair again with those probes swapped
for a friendly example tool, `get_weather(city="Paris", unit="celsius")`, and cuts out what the
model would write after the generation prompt. When that does not work for a template (the
render fails, or the generated parser does not read the call back), the analysis' own probe
pair is used, with the probe tools, so the sample parses either way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from analyzer import ChatTemplate, diff_split
from analyzer.analysis.playground import compiled

# The probe texts the analyzer renders with; the friendly sample replaces them.
from analyzer.analysis.variants import (
    ARG_A,
    ARG_B,
    ASSISTANT_MSG,
    FUNC_A,
    REASONING_MSG,
    USER_MSG,
    VAL_A,
    VAL_B,
)
from analyzer.errors import AnalyzerError
from lab.analyses import parsing

if TYPE_CHECKING:
    from lab.analyses.models import Analysis

# Every field a template might print is there (Cohere's templates print each description).
EXAMPLE_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "City name"},
                    "unit": {
                        "type": "string",
                        "description": "Temperature unit",
                        "enum": ["celsius", "fahrenheit"],
                    },
                },
                "required": ["city"],
            },
        },
    }
]
EXAMPLE_CALL = ("get_weather", {"city": "Paris", "unit": "celsius"})

# Probe text -> friendly text. Every probe is a unique run of letters, digits, underscores and
# spaces, so replacing it inside the params' JSON text also reaches arguments held as a string.
FRIENDLY_TEXT = {
    FUNC_A: "get_weather",
    ARG_A: "city",
    ARG_B: "unit",
    VAL_A: "Paris",
    VAL_B: "celsius",
    USER_MSG: "What is the weather in Paris?",
    ASSISTANT_MSG: "It is sunny in Paris, 18 degrees.",
    REASONING_MSG: "The user wants the weather in Paris; I will look it up.",
}

SAMPLE_PREFERENCE = ("T1", "R1")  # a tool call if the template has them, else reasoning
PLAIN_SAMPLE = "Hello! How can I help you today?"
RENDER_CLOCK = datetime(2025, 1, 1, 12, 0, 0)  # what strftime_now shows; cut away with the prompt


@dataclass(frozen=True)
class Sample:
    """A model output to pre-fill the live textbox with, and the tools it calls."""

    text: str
    tools: list[dict[str, Any]] = field(default_factory=list)
    friendly: bool = False  # rendered with the example tool, not the analyzer's probes

    def options(self) -> parsing.ParserOptions:
        """The request options the sample parses under: its own tools."""
        return parsing.ParserOptions(tools=self.tools)


def sample_for(analysis: Analysis) -> Sample:
    """Return the sample of a finished analysis (rendered once per process)."""
    template = analysis.template
    return build_sample(
        template.source, template.bos_token, template.eos_token, analysis.result_json
    )


@lru_cache(maxsize=32)
def build_sample(source: str, bos_token: str, eos_token: str, result_json: str) -> Sample:
    """Return the friendly sample for a template and its analysis, else the probe sample."""
    result = json.loads(result_json)
    comparisons = {c.get("id"): c for c in result.get("comparisons") or []}
    prompt = _default_generation_prompt(result)
    chat = ChatSource(source, bos_token, eos_token, str(result.get("render_mode") or "hf"))
    for cid in SAMPLE_PREFERENCE:
        comparison = comparisons.get(cid)
        if not comparison or not (comparison.get("diff") or {}).get("right"):
            continue
        friendly = _friendly_sample(chat, comparison, prompt)
        if friendly is not None and _reads_back(result_json, friendly, cid):
            return friendly
        return probe_sample(comparison, prompt)
    return Sample(PLAIN_SAMPLE)


@dataclass(frozen=True)
class ChatSource:
    """What compiling the template as the analysis did takes."""

    source: str
    bos_token: str
    eos_token: str
    render_mode: str

    def compile(self) -> ChatTemplate:
        # The page's "Serve it" card renders through the same per-process compile
        # (playground.compiled): Jinja's compile is most of a finished page's first render.
        chat = compiled(self.source, self.bos_token, self.eos_token, None, None)
        return chat.at_clock(RENDER_CLOCK).in_mode(self.render_mode)


def _friendly_sample(
    chat_source: ChatSource, comparison: dict[str, Any], prompt: str
) -> Sample | None:
    """Render the comparison's pair with friendly names and cut variant B's output."""
    try:
        chat = chat_source.compile()
        a, b = (
            _render(chat, _friendly(comparison.get(side) or {}))
            for side in ("variant_a", "variant_b")
        )
    except (AnalyzerError, ValueError, TypeError):  # any failure: the probe sample will do
        return None
    split = diff_split(a, b)
    text = output_of(b, len(split.prefix), len(split.suffix), prompt)
    if not text:
        return None
    calls_tools = comparison.get("id") == "T1"
    return Sample(text, EXAMPLE_TOOLS if calls_tools else [], friendly=True)


def _friendly(variant: dict[str, Any]) -> dict[str, Any]:
    text = str(variant.get("params") or "{}")
    for probe, friendly in FRIENDLY_TEXT.items():
        text = text.replace(probe, friendly)
    params: dict[str, Any] = json.loads(text)
    if params.get("tools"):
        params["tools"] = EXAMPLE_TOOLS
    return params


def _render(chat: ChatTemplate, params: dict[str, Any]) -> str:
    return chat.render(
        params.get("messages") or [],
        tools=params.get("tools"),
        add_generation_prompt=bool(params.get("add_generation_prompt")),
        **(params.get("kwargs") or {}),
    )


def _reads_back(result_json: str, sample: Sample, cid: str) -> bool:
    """Tell whether the generated parser reads the sample back as the template wrote it."""
    live = parsing.open_stream(result_json, sample.options())
    if live is None:
        return False
    live.feed(sample.text)
    state = live.finish()
    if state.problems:  # a marker kept as text, or an error
        return False
    if cid != "T1":
        return True
    name, arguments = EXAMPLE_CALL
    return [(c.name, _json_or_none(c.arguments)) for c in state.tool_calls] == [(name, arguments)]


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def probe_sample(comparison: dict[str, Any], prompt: str) -> Sample:
    """Cut the analysis' own variant B output, with the probe tools it was rendered with."""
    diff = comparison.get("diff") or {}
    variant = comparison.get("variant_b") or {}
    rendered = str(variant.get("rendered") or "")
    prefix, suffix = len(diff.get("prefix") or ""), len(diff.get("suffix") or "")
    text = output_of(rendered, prefix, suffix, prompt) or PLAIN_SAMPLE
    params = json.loads(str(variant.get("params") or "{}"))
    return Sample(text, list(params.get("tools") or []))


def output_of(rendered: str, prefix_len: int, suffix_len: int, prompt: str) -> str:
    """Cut the difference of a rendered variant, widened back to where the prompt ends.

    A model's output starts right after the generation prompt; the difference alone may start
    mid-turn (after an empty thinking block, or inside a channel header).
    """
    start, end = prefix_len, len(rendered) - suffix_len
    if end <= start:
        return ""
    at = rendered.rfind(prompt, 0, start) if prompt else -1
    begin = at + len(prompt) if at >= 0 else start
    return rendered[begin:end]


def _default_generation_prompt(result: dict[str, Any]) -> str:
    prompts = result.get("generation_prompts") or []
    unset = [p for p in prompts if p.get("enable_thinking") is None]
    return str((unset or prompts or [{}])[0].get("text") or "")
