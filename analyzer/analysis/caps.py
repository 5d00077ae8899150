"""Probe what a chat template supports by rendering small conversations through it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import jinja2
import jinja2.ext

from analyzer.analysis.variants import (
    ARG_A,
    FUNC_A,
    FUNC_B,
    ID_A,
    ID_B,
    SYSTEM_MSG,
    TOOL_RESULT,
    TOOLS,
    USER_MSG,
    VAL_A,
    CallFactory,
    RenderInput,
    VariantRenderer,
    assistant,
    render_input,
    system,
    tool_result,
    user,
)
from analyzer.model import Capabilities
from analyzer.render.hf_globals import GenerationExtension
from analyzer.render.sandbox import free_variables

# Variables every chat template gets from the renderer; anything else it reads is a kwarg.
_STANDARD_VARIABLES = frozenset(
    {
        "messages", "tools", "add_generation_prompt", "bos_token", "eos_token",
        "raise_exception", "strftime_now", "range", "namespace", "dict", "lipsum", "cycler",
        "joiner", "true", "false", "none", "True", "False", "None", "loop",
    }
)


@dataclass(frozen=True)
class ProbeResult:
    """Capabilities, plus how the comparisons should pass arguments and tools."""

    caps: Capabilities
    calls: CallFactory
    base_tools: list[dict[str, object]] | None  # tools for probes not about tools


_UNDEFINED_RE = re.compile(r"'(\w+)' is undefined")


def required_kwargs(renderer: VariantRenderer, kwargs: tuple[str, ...]) -> dict[str, str]:
    """Give an empty string to each extra variable the template cannot render without.

    Some templates (Firefunction's `functions`, `datetime`) read variables their serving
    code supplies; the analysis supplies "" so the rest of the template can be compared.
    """
    found: dict[str, str] = {}
    probe = {"role": "user", "content": USER_MSG}
    for _ in range(len(kwargs)):
        try:
            extra: dict[str, Any] = dict(found)
            renderer.template.render([probe], tools=TOOLS, add_generation_prompt=True, **extra)
            return found
        except Exception as exc:  # noqa: BLE001 - any failure may name an undefined variable
            match = _UNDEFINED_RE.search(str(exc))
            if match is None or match.group(1) not in kwargs or match.group(1) in found:
                return found
            found[match.group(1)] = ""
    return found


def needs_tools(renderer: VariantRenderer) -> bool:
    """Tell whether the template only renders when given a tool list (e.g. loops over it)."""
    bare = render_input("caps: no tools", [user()], add_generation_prompt=True)
    with_tools = render_input("caps: tools", [user()], tools=TOOLS, add_generation_prompt=True)
    return renderer.text(bare) is None and renderer.text(with_tools) is not None


@lru_cache(maxsize=256)
def template_kwargs(source: str) -> tuple[str, ...]:
    """List the variables the template reads but never sets, beyond the standard ones."""
    env = jinja2.Environment(extensions=[jinja2.ext.loopcontrols, GenerationExtension])
    try:
        ast = env.parse(source)
    except jinja2.TemplateError:
        return ()
    return extra_variables(free_variables(ast))


def extra_variables(free: frozenset[str]) -> tuple[str, ...]:
    """List, sorted, the free variables of a template that the renderer does not supply."""
    return tuple(sorted(free - _STANDARD_VARIABLES))


def _with_calls(calls: list[dict[str, object]], label: str) -> RenderInput:
    messages = [user(), assistant("", tool_calls=calls)]
    return render_input(label, messages, tools=TOOLS)


def _no_calls() -> RenderInput:
    return render_input("caps: content only", [user(), assistant()], tools=TOOLS)


def _count(renderer: VariantRenderer, inp: RenderInput, needle: str) -> int:
    text = renderer.text(inp)
    return -1 if text is None else text.count(needle)


def _calls_visible(renderer: VariantRenderer, factory: CallFactory) -> bool:
    """Tell whether a call renders its name and argument value (not as escaped JSON)."""
    inp = _with_calls([factory.call()], f"caps: one call, string_args={factory.string_args}")
    text = renderer.text(inp)
    if text is None or f'\\"{ARG_A}\\"' in text:
        return False
    return _count(renderer, inp, FUNC_A) > _count(renderer, _no_calls(), FUNC_A) and VAL_A in text


def _shows(renderer: VariantRenderer, inp: RenderInput, needle: str) -> bool:
    text = renderer.text(inp)
    return text is not None and needle in text


def probe_capabilities(renderer: VariantRenderer) -> ProbeResult:
    """Render probes through the template and report what it supports."""
    # The compiled template already names its free variables: no second parse of its source.
    kwargs = extra_variables(renderer.template.free_variables)
    renderer.defaults.update(required_kwargs(renderer, kwargs))
    object_ok = _calls_visible(renderer, CallFactory(string_args=False))
    string_ok = _calls_visible(renderer, CallFactory(string_args=True))
    factory = CallFactory(string_args=string_ok and not object_ok)
    calls_ok = object_ok or string_ok
    base_tools = TOOLS if needs_tools(renderer) else None
    with_system = render_input("caps: system", [system(), user()], tools=base_tools)
    caps = Capabilities(
        supports_system_role=_shows(renderer, with_system, SYSTEM_MSG),
        supports_tools=_shows(renderer, render_input("caps: tools", [user()], tools=TOOLS,
                                                     add_generation_prompt=True), FUNC_A),
        supports_tool_calls=calls_ok,
        supports_tool_responses=calls_ok and _shows_tool_result(renderer, factory),
        supports_parallel_tool_calls=calls_ok and _shows_second_call(renderer, factory),
        supports_tool_call_id=calls_ok and _shows(renderer, _one_call(factory), ID_A),
        requires_object_arguments=object_ok and not string_ok,
        supports_string_arguments=string_ok,
        requires_typed_content=_requires_typed_content(renderer, base_tools),
        requires_non_null_content=calls_ok and _requires_non_null(renderer, factory),
        template_kwargs=kwargs,
    )
    return ProbeResult(caps, factory, base_tools)


def _one_call(factory: CallFactory) -> RenderInput:
    return _with_calls([factory.call()], f"caps: one call, string_args={factory.string_args}")


def _shows_tool_result(renderer: VariantRenderer, factory: CallFactory) -> bool:
    messages = [user(), assistant("", tool_calls=[factory.call()]), tool_result()]
    return _shows(renderer, render_input("caps: tool result", messages, tools=TOOLS), TOOL_RESULT)


def _shows_second_call(renderer: VariantRenderer, factory: CallFactory) -> bool:
    two = _with_calls([factory.call(), factory.call(FUNC_B, call_id=ID_B)], "caps: two calls")
    return _count(renderer, two, FUNC_B) > _count(renderer, _one_call(factory), FUNC_B)


def _requires_typed_content(
    renderer: VariantRenderer, tools: list[dict[str, object]] | None
) -> bool:
    typed = [{"role": "user", "content": [{"type": "text", "text": USER_MSG}]}]
    plain_ok = _shows(renderer, render_input("caps: text content", [user()], tools=tools), USER_MSG)
    typed_ok = _shows(renderer, render_input("caps: typed content", typed, tools=tools), USER_MSG)
    return typed_ok and not plain_ok


def _requires_non_null(renderer: VariantRenderer, factory: CallFactory) -> bool:
    """Tell whether null content fails or prints "None" where empty content does not."""
    empty = [user(), assistant("", tool_calls=[factory.call()])]
    null = [user(), assistant(None, tool_calls=[factory.call()])]
    with_empty = renderer.text(render_input("caps: one call", empty, tools=TOOLS))
    with_null = renderer.text(render_input("caps: null content with a call", null, tools=TOOLS))
    if with_null is None or with_empty is None:
        return with_null is None and with_empty is not None
    return with_null.count("None") > with_empty.count("None")
