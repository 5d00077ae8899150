"""What each mode, format and prompt label on the analysis page means, in one sentence.

The names are the analyzer's (and llama.cpp's autoparser's); the page shows each with its
meaning as a tooltip and lists the ones it uses in a glossary.
"""

from __future__ import annotations

MEANINGS: dict[tuple[str, str], str] = {
    ("reasoning", "NONE"): "No reasoning markers: the template never shows the model's thinking.",
    ("reasoning", "TAG_BASED"): (
        "Reasoning sits in an optional start…end block (e.g. <think>…</think>) that the model "
        "opens itself."
    ),
    ("reasoning", "DELIMITER"): (
        "No start marker: the output is reasoning until the end marker, then the answer."
    ),
    ("reasoning", "FORCED_OPEN"): (
        "The generation prompt already opens the reasoning block: the output starts inside "
        "reasoning and must close it."
    ),
    ("reasoning", "FORCED_CLOSED"): (
        "llama.cpp's name for: forced open when thinking is on (the prompt ends with the start "
        "marker), and an empty, already closed block when it is off. The name describes the "
        "'off' case only; the prompt cards show both."
    ),
    ("reasoning", "TOOLS_ONLY"): "Reasoning is rendered only next to tool calls.",
    ("content", "PLAIN"): "The answer is plain text, no wrapper.",
    ("content", "ALWAYS_WRAPPED"): "The answer always sits between content markers.",
    ("content", "WRAPPED_WITH_REASONING"): (
        "The answer is wrapped in content markers only when reasoning comes before it."
    ),
    ("tools", "NONE"): "The template renders no tool calls.",
    ("tools", "JSON_NATIVE"): (
        "Each call is one JSON object holding both the name and the arguments "
        '(e.g. {"name": …, "arguments": {…}}).'
    ),
    ("tools", "TAG_WITH_JSON"): (
        "The function name sits in markup outside the JSON; the arguments are a JSON object."
    ),
    ("tools", "TAG_WITH_TAGGED"): (
        "The name and each argument sit in their own markers (XML-like), no JSON object."
    ),
    ("call id", "NONE"): "Calls carry no id, or the template does not render it.",
    ("call id", "PRE_FUNC_NAME"): "The call id comes before the function name.",
    ("call id", "BETWEEN_FUNC_AND_ARGS"): "The call id sits between the name and the arguments.",
    ("call id", "POST_ARGS"): "The call id comes after the arguments.",
    ("prompt", "forced-open"): (
        "The generation prompt ends with the reasoning start marker: the model starts thinking."
    ),
    ("prompt", "closed"): (
        "The generation prompt ends with a closed (empty) reasoning block: no thinking."
    ),
    ("prompt", "model's choice"): (
        "The prompt opens no reasoning block: the model may or may not think."
    ),
    ("prompt", "unsupported"): "The template refused to render this setting.",
}


def meaning(kind: str, name: str) -> str:
    """One sentence on what this mode or label means ("" for a name we have not described)."""
    return MEANINGS.get((kind, name), "")
