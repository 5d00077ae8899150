"""Our renderer must match transformers' render_jinja_template byte for byte on the corpus."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import jinja2
import pytest

from analyzer.errors import TemplateRaisedError, TemplateRenderError
from analyzer.render.template import ChatTemplate

CORPUS = Path(__file__).resolve().parents[3] / ".." / "shared" / "corpus" / "templates"
TEMPLATES = sorted(CORPUS.glob("*.jinja")) if CORPUS.is_dir() else []
BOS, EOS = "<s>", "</s>"

hf_utils = pytest.importorskip(
    "transformers.utils.chat_template_utils", reason="transformers is not installed"
)

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather for a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City name"}},
            "required": ["city"],
        },
    },
}
# Nine alphanumeric characters: Mistral's templates refuse any other call id shape.
CALL_ID = "call12345"
TOOL_CALL = {
    "id": CALL_ID,
    "type": "function",
    "function": {"name": "get_weather", "arguments": {"city": "Paris"}},
}
SYSTEM = {"role": "system", "content": "You are terse."}
USER = {"role": "user", "content": "What is the weather in Paris? Réponds en français."}
ANSWER = {"role": "assistant", "content": "Il fait beau."}
THOUGHTFUL_ANSWER = {"role": "assistant", "content": "Sunny.", "reasoning_content": "Look it up."}
CALLING = {"role": "assistant", "content": "", "tool_calls": [TOOL_CALL]}
TOOL_RESULT = {
    "role": "tool", "tool_call_id": CALL_ID, "name": "get_weather", "content": '{"sky": "clear"}'
}
CONVERSATIONS: dict[str, list[dict[str, Any]]] = {
    "system+user": [SYSTEM, USER],
    "user": [USER],
    "assistant content": [USER, ANSWER, {"role": "user", "content": "Thanks"}],
    "assistant reasoning": [USER, THOUGHTFUL_ANSWER],
    "tool call": [SYSTEM, USER, CALLING],
    "tool response": [USER, CALLING, TOOL_RESULT],
    "tool round trip": [USER, CALLING, TOOL_RESULT, ANSWER],
}


def variants(source: str) -> list[dict[str, Any]]:
    """Every render setting to compare for one template."""
    thinking = [True, False] if "enable_thinking" in source else [None]
    grid = itertools.product(CONVERSATIONS, [None, [WEATHER_TOOL]], [False, True], thinking)
    return [
        {"conversation": name, "tools": tools, "add_generation_prompt": gp, "enable_thinking": th}
        for name, tools, gp, th in grid
    ]


def hf_render(source: str, setting: dict[str, Any]) -> str | Exception:
    """Render with transformers, as apply_chat_template passes special tokens and kwargs."""
    kwargs = _kwargs(setting)
    try:
        rendered, _ = hf_utils.render_jinja_template(
            conversations=[CONVERSATIONS[setting["conversation"]]],
            tools=setting["tools"],
            chat_template=source,
            add_generation_prompt=setting["add_generation_prompt"],
            bos_token=BOS,
            eos_token=EOS,
            **kwargs,
        )
    except Exception as exc:  # noqa: BLE001 - any refusal counts, we only compare that both refuse
        return exc
    return str(rendered[0])


def our_render(template: ChatTemplate, setting: dict[str, Any]) -> str | Exception:
    try:
        return template.render(
            CONVERSATIONS[setting["conversation"]],
            tools=setting["tools"],
            add_generation_prompt=setting["add_generation_prompt"],
            **_kwargs(setting),
        )
    except TemplateRenderError as exc:
        return exc


def _same_refusal(theirs: Exception, ours: str | Exception) -> bool:
    # transformers' raise_exception raises a bare TemplateError carrying the template's message.
    return isinstance(ours, TemplateRaisedError) and ours.template_message == str(theirs)


def _kwargs(setting: dict[str, Any]) -> dict[str, Any]:
    thinking = setting["enable_thinking"]
    return {} if thinking is None else {"enable_thinking": thinking}


def mismatches(path: Path) -> tuple[list[str], int]:
    """Compare every variant of one template; return the differing ones and the count run."""
    source = path.read_text(encoding="utf-8")
    template = ChatTemplate(source, bos_token=BOS, eos_token=EOS)
    problems = []
    settings = variants(source)
    for setting in settings:
        theirs, ours = hf_render(source, setting), our_render(template, setting)
        if isinstance(theirs, Exception) != isinstance(ours, Exception):
            problems.append(f"{setting}: transformers gave {theirs!r}, we gave {ours!r}")
        elif type(theirs) is jinja2.TemplateError and not _same_refusal(theirs, ours):
            problems.append(f"{setting}: the template raised {theirs}; we gave {ours!r}")
        elif not isinstance(theirs, Exception) and theirs != ours:
            problems.append(f"{setting}: output differs\n--- hf\n{theirs}\n--- ours\n{ours}")
    return problems, len(settings)


@pytest.mark.skipif(not TEMPLATES, reason=f"corpus not found at {CORPUS}")
@pytest.mark.parametrize("path", TEMPLATES, ids=[p.stem for p in TEMPLATES])
def test_it_renders_every_variant_exactly_like_transformers(path: Path) -> None:
    problems, count = mismatches(path)
    assert count >= 28
    assert not problems, "\n\n".join(problems[:3])


@pytest.mark.skipif(not TEMPLATES, reason=f"corpus not found at {CORPUS}")
def test_most_corpus_variants_render_rather_than_refuse() -> None:
    # Guards against a parity test that passes only because both sides fail.
    rendered = 0
    for path in TEMPLATES[:10]:
        template = ChatTemplate(path.read_text(encoding="utf-8"), bos_token=BOS, eos_token=EOS)
        source = template.source
        outputs = [our_render(template, s) for s in variants(source)]
        rendered += sum(isinstance(o, str) for o in outputs)
    assert rendered > 200


# Small templates of our own that exercise each transformers-specific behaviour.
EDGE_TEMPLATES = {
    "tojson options": "{{ tools|tojson(indent=2, sort_keys=True) }}{{ messages|tojson }}"
    "{{ tools|tojson(separators=(',', ':')) }}{{ tools|tojson(ensure_ascii=True) }}",
    "generation tag": "{% for m in messages %}{% generation %}{{ m.content }}{% endgeneration %}"
    "{% endfor %}",
    "namespace and dict": "{% set ns = namespace(a=1) %}{% set ns.a = ns.a + 1 %}{{ ns.a }}"
    "{{ dict(x=1) }}{{ dict.fromkeys(['k'], 0) }}",
    "reasoning aliases": "{% for m in messages %}[{{ m.reasoning_content }}|{{ m.thinking }}]"
    "{% endfor %}",
    "loop controls": "{% for m in messages %}{% if loop.index0 == 1 %}{% continue %}{% endif %}"
    "{{ m.role }}{% if loop.index == 3 %}{% break %}{% endif %}{% endfor %}",
    "unsafe undefined": "{% if ''.__class__ %}x{% endif %}[{{ ''.__class__ }}]",
    "none content": "{% for m in messages %}{{ m.content is none }}{% endfor %}",
    "whitespace control": "{% for m in messages %}\n  {%- if m.role %}\n    {{ m.role }}\n"
    "  {% endif %}\n{% endfor %}\n",
    "refusal": "{{ raise_exception('no ' ~ messages[0].role) }}",
    "runtime error": "{{ messages[0].content + 1 }}",
    "mutation refused": "{% set l = [] %}{{ l.append(1) }}",
}
EDGE_MESSAGES = [
    {"role": "system", "content": "S"},
    {"role": "user", "content": "é <tag> & 'q'"},
    {"role": "assistant", "content": None, "reasoning": "because"},
    {"role": "assistant", "content": "done", "thinking": "t"},
]


@pytest.mark.parametrize("name", EDGE_TEMPLATES)
def test_transformers_specific_behaviour_matches(name: str) -> None:
    source = EDGE_TEMPLATES[name]
    try:
        rendered, _ = hf_utils.render_jinja_template(
            conversations=[EDGE_MESSAGES], tools=[WEATHER_TOOL], chat_template=source
        )
        theirs: str | None = rendered[0]
    except Exception:  # noqa: BLE001 - only whether it fails matters here
        theirs = None
    try:
        ours: str | None = ChatTemplate(source).render(EDGE_MESSAGES, tools=[WEATHER_TOOL])
    except TemplateRenderError:
        ours = None
    assert ours == theirs
