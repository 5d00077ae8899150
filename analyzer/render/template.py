"""Render chat templates exactly as transformers' `render_jinja_template` does, but bounded."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping, Sequence
from datetime import datetime
from types import CodeType, TracebackType
from typing import TYPE_CHECKING, Any

import jinja2
from jinja2.exceptions import SecurityError

from analyzer.errors import (
    AnalyzerError,
    InvalidInputError,
    RenderLimitError,
    SandboxViolationError,
    TemplateRaisedError,
    TemplateRenderError,
    template_lines,
)
from analyzer.model import RenderMode
from analyzer.render import code_cache
from analyzer.render.hf_globals import IteratorNotSerializable, TemplateRaise
from analyzer.render.lenient import LenientEnvironment
from analyzer.render.limits import LimitExceeded, RenderLimits, budget_for, check_template_size
from analyzer.render.memo import RenderMemo, memo_key
from analyzer.render.sandbox import BoundedEnvironment, MutationRefused
from analyzer.render.syntax import syntax_error

if TYPE_CHECKING:
    from analyzer.render.loading import TemplateSource

# transformers copies a message's reasoning under all of these names; templates read one of them.
REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")
TEMPLATE_FILENAME = "<template>"


class ChatTemplate:
    """A chat template compiled once in a bounded Hugging Face sandbox.

    `now` fixes the moment strftime_now formats (None: the current time, as transformers).
    `mode` LENIENT also allows what llama.cpp's Jinja does and transformers refuses (see
    `analyzer.render.lenient`); the default HF renders exactly as transformers does.
    """

    def __init__(
        self,
        source: str,
        *,
        bos_token: str = "",
        eos_token: str = "",
        limits: RenderLimits | None = None,
        now: datetime | None = None,
        mode: RenderMode | str = RenderMode.HF,
    ) -> None:
        self.source = source
        self.bos_token = bos_token
        self.eos_token = eos_token
        self.limits = limits or RenderLimits()
        self.now = now
        self.mode = render_mode(mode)
        self._env = environment_for(self.mode, self.limits, now)
        self._memo = memo_for(now)
        try:
            check_template_size(source, self.limits)
            self._code, self.free_variables = compile_shared(self._env, source)
            self._template = template_from_code(self._env, self._code)
        except jinja2.TemplateSyntaxError as exc:
            index = self._env.failing_token_index
            raise syntax_error(exc, source, self._env, index) from None
        except (LimitExceeded, RecursionError) as exc:
            raise compile_limit_error(exc) from None

    @classmethod
    def from_source(
        cls,
        ts: TemplateSource,
        *,
        limits: RenderLimits | None = None,
        now: datetime | None = None,
        mode: RenderMode | str = RenderMode.HF,
    ) -> ChatTemplate:
        """Compile a loaded template with the special tokens that came with it."""
        return cls(ts.source, bos_token=ts.bos_token, eos_token=ts.eos_token, limits=limits,
                   now=now, mode=mode)

    def in_mode(self, mode: RenderMode | str) -> ChatTemplate:
        """Return this template rendering in another mode, without compiling it again."""
        # Jinja's generated code is the same in both modes: they differ only in the checks
        # the code calls through `environment` while rendering (attributes, calls, tojson).
        return self._twin(render_mode(mode), self.now)

    def at_clock(self, now: datetime | None) -> ChatTemplate:
        """Return this template with strftime_now showing `now`, without compiling it again."""
        # The clock is a global of the environment, not part of the generated code.
        return self._twin(self.mode, now)

    def _twin(self, mode: RenderMode, now: datetime | None) -> ChatTemplate:
        twin = copy.copy(self)
        twin.mode, twin.now = mode, now
        twin._env = environment_for(mode, self.limits, now)
        twin._memo = memo_for(now)
        twin._template = template_from_code(twin._env, self._code)
        return twin

    def render(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        documents: Sequence[Mapping[str, Any]] | None = None,
        add_generation_prompt: bool = False,
        **kwargs: Any,
    ) -> str:
        """Render a conversation; extra kwargs (e.g. enable_thinking) become template variables."""
        # The containers built here are trees of the caller's data, not template-made graphs,
        # so tojson may serialize them without first walking them for size. The mapping keeps
        # them alive so that no container the template makes can reuse one of their ids.
        made: dict[int, Any] = {}
        context = template_context(
            messages, tools, documents, add_generation_prompt, self._special_tokens(kwargs), made
        )
        if self._memo is None:
            return self._render(context, made)
        key = memo_key(context)
        text = self._memo.get(key)
        if text is None:
            text = self._render(context, made)
            self._memo.put(key, text)
        return text

    def _render(self, context: dict[str, Any], made: dict[int, Any]) -> str:
        try:
            with budget_for(self.limits, trusted=made):
                return self._template.render(context)
        except AnalyzerError:
            raise
        except Exception as exc:  # noqa: BLE001 - a template can fail in any Python way
            raise render_error(exc, self.source) from exc

    def _special_tokens(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        # As in apply_chat_template: the tokens first, so explicit kwargs override them.
        return {"bos_token": self.bos_token, "eos_token": self.eos_token, **kwargs}


def memo_for(now: datetime | None) -> RenderMemo | None:
    """A memo of renders for a template on a fixed clock; none when strftime_now shows the
    current time (the same inputs render another text a minute later)."""
    return RenderMemo() if now is not None else None


def environment_for(
    mode: RenderMode, limits: RenderLimits, now: datetime | None
) -> BoundedEnvironment:
    """Build the sandbox a render mode renders in."""
    environment = LenientEnvironment if mode is RenderMode.LENIENT else BoundedEnvironment
    return environment(limits, now=now)


def compile_shared(env: BoundedEnvironment, source: str) -> tuple[CodeType, frozenset[str]]:
    """Compile the source, or load its code compiled by any process (see code_cache)."""
    stored = code_cache.load(source)
    if stored is not None:
        return stored
    code = env.compile(source)
    free = env.free_variables  # read but never set
    code_cache.store(source, code, free)
    return code, free


def template_from_code(env: BoundedEnvironment, code: CodeType) -> jinja2.Template:
    """Make a Jinja template of compiled code, as `env.from_string` does after compiling."""
    return env.template_class.from_code(env, code, env.make_globals(None), None)


def render_mode(mode: RenderMode | str) -> RenderMode:
    """Return the RenderMode a name ("hf" or "lenient") stands for."""
    try:
        return RenderMode(mode)
    except ValueError:
        names = " or ".join(repr(m.value) for m in RenderMode)
        raise InvalidInputError(f"the render mode must be {names}; found {mode!r}") from None


def template_context(
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]] | None,
    documents: Sequence[Mapping[str, Any]] | None,
    add_generation_prompt: bool,
    kwargs: dict[str, Any],
    made: dict[int, Any] | None = None,
) -> dict[str, Any]:
    """Build the variables a template sees, converted to plain data as transformers does.

    The containers built are recorded in `made` (by id) when given.
    """
    for tool in tools or []:
        if not isinstance(tool, Mapping):
            raise InvalidInputError(f"each tool must be a JSON schema dict; found {tool!r}")
    for document in documents or []:
        if not isinstance(document, Mapping):
            raise InvalidInputError(f"each document must be a dict; found {document!r}")
    chat = plain_data(messages, made)
    for message in chat:
        if not isinstance(message, dict):
            raise InvalidInputError(f"each message must be a dict; found {message!r}")
    context: dict[str, Any] = plain_data(kwargs, made)
    context.update(
        messages=alias_reasoning_fields(chat, made),
        tools=plain_data(tools, made),
        documents=plain_data(documents, made),
        add_generation_prompt=add_generation_prompt,
    )
    return context


def alias_reasoning_fields(
    chat: list[dict[str, Any]], made: dict[int, Any] | None = None
) -> list[dict[str, Any]]:
    """Copy a message's reasoning to `thinking` and `reasoning_content`, as transformers does."""
    aliased: list[dict[str, Any]] = []
    for message in chat:
        reasoning = next(
            (message[key] for key in REASONING_FIELDS if message.get(key) is not None), None
        )
        if reasoning is not None:
            message = {"thinking": reasoning, **message, "reasoning_content": reasoning}
            if made is not None:
                made[id(message)] = message
        aliased.append(message)
    if made is not None:
        made[id(aliased)] = aliased
    return aliased


def plain_data(value: Any, made: dict[int, Any] | None = None) -> Any:
    """Rebuild a value from plain JSON-like types; anything else becomes a "<Type>" placeholder.

    The containers built are recorded in `made` (by id) when given.
    """
    kind = type(value)
    if value is None or kind in _PLAIN_SCALARS:
        return value
    # JSON-decoded input is all dicts and lists: copy those without the generic checks.
    if kind is dict:
        copy: Any = {plain_data(key, made): plain_data(item, made) for key, item in value.items()}
    elif kind is list:
        copy = [plain_data(item, made) for item in value]
    else:
        copy = _plain_other(value, made)
    if made is not None and isinstance(copy, (dict, list, tuple)):
        made[id(copy)] = copy
    return copy


_PLAIN_SCALARS = frozenset({str, int, float, bool})


def _plain_other(value: Any, made: dict[int, Any] | None) -> Any:
    # Subclasses (enums, numpy scalars) may carry methods: strip them back to the base type.
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    return _plain_container(value, made)


def _plain_container(value: Any, made: dict[int, Any] | None) -> Any:
    if isinstance(value, Mapping):
        return {plain_data(key, made): plain_data(item, made) for key, item in value.items()}
    if isinstance(value, list):
        return [plain_data(item, made) for item in value]
    if isinstance(value, tuple):
        return tuple(plain_data(item, made) for item in value)
    if hasattr(value, "item") and type(value).__module__ == "numpy":
        return plain_data(value.item(), made)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = dataclasses.fields(value)
        return {f.name: plain_data(getattr(value, f.name), made) for f in fields}
    if callable(getattr(value, "model_dump", None)):
        return plain_data(value.model_dump(), made)
    return f"<{type(value).__name__}>"


def compile_limit_error(exc: LimitExceeded | RecursionError) -> RenderLimitError:
    """Translate a limit hit while compiling (size, or nesting too deep to parse)."""
    if isinstance(exc, LimitExceeded):
        return RenderLimitError(exc.message, limit=exc.limit, allowed=exc.allowed)
    return RenderLimitError(
        "the template nests blocks or expressions too deeply to compile",
        limit="recursion", allowed=0,
    )


def template_lineno(tb: TracebackType | None) -> int | None:
    """Return the template line of the innermost template frame in a traceback."""
    lineno = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == TEMPLATE_FILENAME:
            lineno = tb.tb_lineno
        tb = tb.tb_next
    return lineno


def render_error(exc: BaseException, source: str) -> TemplateRenderError:
    """Translate an exception raised while rendering into the analyzer's error for it."""
    lineno = template_lineno(exc.__traceback__)
    lines = template_lines(source)
    line = lines[lineno - 1] if lineno is not None and 0 < lineno <= len(lines) else ""
    if isinstance(exc, TemplateRaise):
        return TemplateRaisedError(exc.message, lineno=lineno, source_line=line)
    if isinstance(exc, LimitExceeded):
        return RenderLimitError(
            exc.message, limit=exc.limit, allowed=exc.allowed, lineno=lineno, source_line=line
        )
    if isinstance(exc, SecurityError):
        return SandboxViolationError(str(exc), lineno=lineno, source_line=line,
                                     lenient_allows=isinstance(exc, MutationRefused))
    if isinstance(exc, RecursionError):
        return RenderLimitError(
            "Python's recursion limit was hit (runaway recursion?)",
            limit="recursion", allowed=0, lineno=lineno, source_line=line,
        )
    if isinstance(exc, MemoryError):
        return RenderLimitError(
            "the render ran out of memory", limit="memory", allowed=0,
            lineno=lineno, source_line=line,
        )
    if isinstance(exc, IteratorNotSerializable):
        return TemplateRenderError(f"TypeError: {exc}", lineno=lineno, source_line=line,
                                   lenient_allows=True)
    return TemplateRenderError(f"{type(exc).__name__}: {exc}", lineno=lineno, source_line=line)
