"""Guess a chat template's model family from the special tokens its source writes.

Used only to title a template that came with no name (a paste); the first match wins, so
the more specific markers come first.
"""

from __future__ import annotations

# (a marker the family's templates write, the family's name)
FAMILY_MARKERS = (
    ("<|channel|>", "GPT-OSS (harmony)"),
    ("[gMASK]", "GLM"),
    ("<seed:bos>", "Seed-OSS"),
    ("<｜Assistant｜>", "DeepSeek"),
    ("<|START_OF_TURN_TOKEN|>", "Command R"),
    ("<|start_header_id|>", "Llama 3"),
    ("<start_of_turn>", "Gemma"),
    ("<|turn>", "Gemma 4"),
    ("<|im_middle|>", "Kimi"),
    ("<|start_of_role|>", "Granite"),
    ("[TOOL_CALLS]", "Mistral"),
    ("[INST]", "Mistral / Llama 2"),
    ("<|im_start|>", "ChatML"),
    ("<|user|>", "Phi / GLM-style"),
)


def detect_family(source: str) -> str:
    """Name the family whose marker the source writes first in FAMILY_MARKERS ("" if none)."""
    for marker, family in FAMILY_MARKERS:
        if marker in source:
            return family
    return ""
