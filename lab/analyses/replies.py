"""The live textbox's replies: only what changed since the state the page shows.

Resending the whole parsed message on every keystroke made the bytes sent back quadratic in
the text typed (10 KB in 4-character chunks came back as ~21 MB). A delta appends to the text
fields and to each tool call's arguments, and replaces any other field only when it changed,
so a field added to the state later (e.g. deviations) travels without changes here.
"""

from __future__ import annotations

from typing import Any, cast

from lab.analyses.messages import DeltaMessage, StateMessage, ToolCallChange, ToolCallPayload

APPENDED = ("reasoning", "content")
ALWAYS = ("received", "finished", "delta_count")  # small: sent in every delta
SPECIAL = frozenset({"type", "tool_calls", *APPENDED, *ALWAYS})


def reply_for(shown: StateMessage | None, now: StateMessage) -> StateMessage | DeltaMessage:
    """Return what turns `shown` into `now`: a delta, or the whole state if it is no extension."""
    if shown is None or not extends(shown, now):
        return now
    delta: dict[str, Any] = {"type": "delta", **{key: now[key] for key in ALWAYS}}  # type: ignore[literal-required]
    for key in APPENDED:
        added = now[key][len(shown[key]) :]  # type: ignore[literal-required]
        if added:
            delta[key] = added
    calls = call_changes(shown["tool_calls"], now["tool_calls"])
    if calls:
        delta["tool_calls"] = calls
    old, new = cast(dict[str, Any], shown), cast(dict[str, Any], now)
    delta.update({k: v for k, v in new.items() if k not in SPECIAL and old.get(k) != v})
    return cast(DeltaMessage, delta)


def extends(shown: StateMessage, now: StateMessage) -> bool:
    """Tell whether `now` only appends to `shown`'s text fields and call arguments."""
    if any(not now[k].startswith(shown[k]) for k in APPENDED):  # type: ignore[literal-required]
        return False
    if len(now["tool_calls"]) < len(shown["tool_calls"]):
        return False
    pairs = zip(shown["tool_calls"], now["tool_calls"], strict=False)
    return all(new["arguments"].startswith(old["arguments"]) for old, new in pairs)


def call_changes(
    shown: list[ToolCallPayload], now: list[ToolCallPayload]
) -> list[ToolCallChange]:
    """List the tool calls that are new or changed, each with only what changed."""
    changes: list[ToolCallChange] = []
    for index, call in enumerate(now):
        old = shown[index] if index < len(shown) else None
        change: ToolCallChange = {
            "index": index, "arguments": call["arguments"][len(old["arguments"]) if old else 0 :]
        }
        if old is None or old["name"] != call["name"]:
            change["name"] = call["name"]
        if old is None or old["id"] != call["id"]:
            change["id"] = call["id"]
        if old is None or len(change) > 2 or change["arguments"]:
            changes.append(change)
    return changes
