"""Render any conversation through a template, as apply_chat_template would, and diff two renders.

The analysis renders only its fixed variant pairs; the playground renders what a user gives:
messages (with tool calls, tool responses, reasoning), tools, every kwarg the template reads,
add_generation_prompt, continue_final_message and the special tokens. A request is a frozen
value with a canonical JSON form, so a page can make a permalink of it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

from analyzer.analysis.caps import extra_variables
from analyzer.analysis.diff import diff_split
from analyzer.errors import InvalidInputError, TemplateRenderError
from analyzer.model import DiffSplit, RenderMode
from analyzer.render.limits import RenderLimits
from analyzer.render.loading import TemplateSource, load_template_text
from analyzer.render.template import REASONING_FIELDS, ChatTemplate, alias_reasoning_fields

# Names apply_chat_template fills itself; a kwarg of one of these would be shadowed or clash.
RESERVED_KWARGS = frozenset({"messages", "tools", "documents", "add_generation_prompt"})
# transformers' marker for where a continued message ends (the space is part of it).
CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "


@dataclass(frozen=True)
class RenderRequest:
    """What to render: a conversation and every apply_chat_template argument.

    Containers are kept as compact JSON text so the request is hashable and its JSON
    (`to_json`) is the same bytes for the same inputs. Keys keep the caller's order: a
    template's `tojson` writes them in that order, so sorting them would change the prompt.
    `bos_token`/`eos_token` None means the tokens that came with the template.
    """

    messages_json: str
    tools_json: str = "null"
    kwargs_json: str = "{}"
    add_generation_prompt: bool = True
    continue_final_message: str = ""  # "" or the final message's field to continue
    bos_token: str | None = None
    eos_token: str | None = None

    @classmethod
    def make(
        cls,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        kwargs: Mapping[str, Any] | None = None,
        add_generation_prompt: bool = True,
        continue_final_message: bool | str = False,
        bos_token: str | None = None,
        eos_token: str | None = None,
    ) -> RenderRequest:
        """Check the inputs (raising InvalidInputError saying which is wrong) and freeze them.

        `continue_final_message` True continues the final message's content; a field name
        ("reasoning_content") continues that field, as transformers allows.
        """
        check_messages(messages)
        check_tools(tools)
        check_kwargs(kwargs or {})
        if add_generation_prompt and continue_final_message:
            raise InvalidInputError(
                "add_generation_prompt and continue_final_message: expected at most one of "
                "them (the prompt either opens a new assistant turn or continues the last "
                "message); found both")
        field = "content" if continue_final_message is True else (continue_final_message or "")
        return cls(ordered_json(list(messages)), ordered_json(tools),
                   ordered_json(dict(kwargs or {})), add_generation_prompt,
                   field, bos_token, eos_token)

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(json.loads(self.messages_json))

    @property
    def tools(self) -> list[dict[str, Any]] | None:
        tools = json.loads(self.tools_json)
        return None if tools is None else list(tools)

    @property
    def kwargs(self) -> dict[str, Any]:
        return dict(json.loads(self.kwargs_json))

    def with_changes(self, **changes: Any) -> RenderRequest:
        """Return this request with some inputs replaced (messages, tools, kwargs, flags...)."""
        inputs: dict[str, Any] = {
            "messages": self.messages, "tools": self.tools, "kwargs": self.kwargs,
            "add_generation_prompt": self.add_generation_prompt,
            "continue_final_message": self.continue_final_message,
            "bos_token": self.bos_token, "eos_token": self.eos_token,
        }
        unknown = changes.keys() - inputs.keys()
        if unknown:
            raise InvalidInputError(f"with_changes: expected some of {sorted(inputs)}; "
                                    f"found {sorted(unknown)}")
        inputs.update(changes)
        messages = inputs.pop("messages")
        return RenderRequest.make(messages, **inputs)

    def to_json(self) -> str:
        """JSON of the inputs (for permalinks): same inputs, same bytes."""
        return ordered_json({
            "messages": self.messages, "tools": self.tools, "kwargs": self.kwargs,
            "add_generation_prompt": self.add_generation_prompt,
            "continue_final_message": self.continue_final_message,
            "bos_token": self.bos_token, "eos_token": self.eos_token,
        })

    @classmethod
    def from_json(cls, text: str) -> RenderRequest:
        """Rebuild a request from `to_json` text (or any object with a "messages" list)."""
        data = parse_request_json(text)
        return cls.make(
            data.get("messages", []), tools=data.get("tools"), kwargs=data.get("kwargs"),
            add_generation_prompt=bool(data.get("add_generation_prompt", True)),
            continue_final_message=data.get("continue_final_message") or False,
            bos_token=optional_text(data, "bos_token"), eos_token=optional_text(data, "eos_token"))


@dataclass(frozen=True)
class RenderResult:
    """The exact prompt a request gives, and how it was rendered."""

    prompt: str
    request: RenderRequest
    render_mode: RenderMode  # HF unless transformers refused and llama.cpp's Jinja allows
    render_note: str  # what transformers refused, when rendered leniently
    template_kwargs: tuple[str, ...]  # variables the template reads beyond the standard ones
    unused_kwargs: tuple[str, ...]  # kwargs given that the template never reads


@dataclass(frozen=True)
class RenderDiff:
    """Two renders side by side: `diff` cuts them into common prefix, middles, common suffix."""

    left: RenderResult
    right: RenderResult
    diff: DiffSplit

    @property
    def identical(self) -> bool:
        return self.left.prompt == self.right.prompt

    @property
    def changed_inputs(self) -> tuple[str, ...]:
        """Name the request inputs that differ (kwargs by name, e.g. "kwargs.enable_thinking")."""
        return request_changes(self.left.request, self.right.request)


def render_conversation(
    template: TemplateSource | str,
    request: RenderRequest,
    *,
    limits: RenderLimits | None = None,
    now: datetime | None = None,
) -> RenderResult:
    """Render a request exactly as transformers' apply_chat_template(tokenize=False) would.

    `template` is a loaded template (its bos/eos are used unless the request sets them) or
    raw Jinja text. `now` fixes what strftime_now formats (None: the current time). Raises
    the template's TemplateRenderError subclasses, or InvalidInputError for a request the
    template cannot continue.
    """
    source = template if isinstance(template, TemplateSource) else load_template_text(template)
    chat = compiled(source.source, pick(request.bos_token, source.bos_token),
                    pick(request.eos_token, source.eos_token), limits, now)
    prompt, mode, note = render_with_fallback(chat, request)
    read = extra_variables(chat.free_variables)  # the compile found them: no second parse
    unused = tuple(sorted(set(request.kwargs) - set(read)))
    return RenderResult(prompt, request, mode, note, read, unused)


def diff_renders(left: RenderResult, right: RenderResult) -> RenderDiff:
    """Diff two renders with the analysis' marker-aware diff (markers are never cut)."""
    return RenderDiff(left, right, diff_split(left.prompt, right.prompt))


@lru_cache(maxsize=64)
def compiled(source: str, bos_token: str, eos_token: str, limits: RenderLimits | None,
             now: datetime | None) -> ChatTemplate:
    """Compile a template once per process and settings (Jinja's compile dominates a render)."""
    return ChatTemplate(source, bos_token=bos_token, eos_token=eos_token, limits=limits, now=now)


def render_with_fallback(chat: ChatTemplate, request: RenderRequest) -> tuple[str, RenderMode, str]:
    """Render as transformers; if it refuses what llama.cpp's Jinja allows, render leniently."""
    try:
        return render_once(chat, request), RenderMode.HF, ""
    except TemplateRenderError as exc:
        if not exc.lenient_allows:
            raise
        lenient = chat.in_mode(RenderMode.LENIENT)
        return render_once(lenient, request), RenderMode.LENIENT, str(exc)


def render_once(chat: ChatTemplate, request: RenderRequest) -> str:
    messages = request.messages
    field = request.continue_final_message
    if field:
        messages = alias_reasoning_fields(messages)
        tag_final_message(messages, field, chat.source)
    prompt = chat.render(messages, tools=request.tools,
                         add_generation_prompt=request.add_generation_prompt, **request.kwargs)
    return cut_at_tag(prompt) if field else prompt


def tag_final_message(messages: list[dict[str, Any]], field: str, template: str) -> None:
    """Mark where the final message's `field` ends, as transformers does, to cut there later."""
    if not messages:
        raise InvalidInputError("continue_final_message: expected a message to continue; "
                                "found an empty conversation")
    final = messages[-1]
    value = final.get(field)
    if value is None:
        raise InvalidInputError(f"continue_final_message: expected the final message to have "
                                f"a {field!r} to continue; found none")
    fields = [f for f in REASONING_FIELDS if final.get(f) == value] \
        if field in REASONING_FIELDS else [field]
    if not any(f in template for f in fields):
        raise InvalidInputError(f"continue_final_message: the template never reads {field!r}")
    if isinstance(value, list | tuple):
        tag_last_text_chunk(value)
        return
    # transformers copies reasoning under every alias; each copy the template may read is tagged.
    for name in fields:
        final[name] = value + CONTINUE_TAG


def tag_last_text_chunk(chunks: list[Any] | tuple[Any, ...]) -> None:
    for chunk in reversed(chunks):
        if isinstance(chunk, dict) and "text" in chunk:
            chunk["text"] = chunk["text"] + CONTINUE_TAG
            return
    raise InvalidInputError("continue_final_message: expected a text chunk in the final "
                            "message; found none")


def cut_at_tag(prompt: str) -> str:
    """End the prompt where the continued text ends (trimmed if the template trimmed it)."""
    if CONTINUE_TAG.strip() not in prompt:
        raise InvalidInputError(
            "continue_final_message: expected the final message in the render, to continue "
            "it; found it missing (the template drops or rewrites that message)")
    at = prompt.rindex(CONTINUE_TAG.strip())
    if prompt[at : at + len(CONTINUE_TAG)] == CONTINUE_TAG:
        return prompt[:at]
    return prompt[:at].rstrip()


def check_messages(messages: Any) -> None:
    if not isinstance(messages, Sequence) or isinstance(messages, str):
        raise InvalidInputError(f"messages: expected a JSON array of message objects; "
                                f"found {type(messages).__name__}")
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping) or not isinstance(message.get("role"), str):
            raise InvalidInputError(f"messages[{index}]: expected an object with a \"role\" "
                                    f"string; found {json.dumps(message)[:80]}")


def check_tools(tools: Any) -> None:
    if tools is None:
        return
    if not isinstance(tools, Sequence) or isinstance(tools, str):
        raise InvalidInputError(f"tools: expected a JSON array of tool definitions; "
                                f"found {type(tools).__name__}")
    for index, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            raise InvalidInputError(f"tools[{index}]: expected an object; "
                                    f"found {json.dumps(tool)[:80]}")


def check_kwargs(kwargs: Any) -> None:
    if not isinstance(kwargs, Mapping):
        raise InvalidInputError(f"kwargs: expected an object of template variables; "
                                f"found {type(kwargs).__name__}")
    clash = sorted(RESERVED_KWARGS & set(kwargs))
    if clash:
        raise InvalidInputError(f"kwargs: {', '.join(clash)} are arguments of their own, "
                                "not template kwargs")


def parse_request_json(text: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"render request: not JSON ({exc.msg} at line {exc.lineno}, "
                                f"column {exc.colno})") from exc
    if not isinstance(data, dict):
        raise InvalidInputError(f"render request: expected a JSON object with \"messages\"; "
                                f"found {type(data).__name__}")
    return data


def optional_text(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise InvalidInputError(f"{key}: expected a string or null; found {json.dumps(value)}")
    return value


def ordered_json(value: Any) -> str:
    """Compact JSON that keeps the key order (it is part of what the template renders)."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"render request: expected JSON data only; found {exc}") from None


def pick(override: str | None, default: str) -> str:
    return default if override is None else override


def request_changes(left: RenderRequest, right: RenderRequest) -> tuple[str, ...]:
    """Name the inputs two requests differ in, kwargs one by one."""
    names = [name for name in ("messages", "tools", "add_generation_prompt",
                               "continue_final_message", "bos_token", "eos_token")
             if getattr(left, name) != getattr(right, name)]
    a, b = left.kwargs, right.kwargs
    names += [f"kwargs.{key}" for key in sorted(a.keys() | b.keys()) if a.get(key) != b.get(key)
              or (key in a) != (key in b)]
    return tuple(names)
