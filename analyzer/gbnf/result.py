"""What a grammar build hands to an inference server: the grammar and when to apply it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class TriggerKind(StrEnum):
    """How a lazy grammar's trigger is matched against the generated text."""

    WORD = "word"  # a fixed string; the grammar applies from where it starts
    PATTERN = "pattern"  # a regex searched anywhere; the grammar applies from group 1
    PATTERN_FULL = "pattern_full"  # a ^...$ regex over the whole output; from group 1


@dataclass(frozen=True)
class Trigger:
    """One condition that switches a lazy grammar on."""

    kind: TriggerKind
    value: str


@dataclass(frozen=True)
class GrammarResult:
    """A GBNF grammar with its triggers and the tokens a tokenizer must keep whole.

    An empty `grammar` means the request needs no constraint (no tools, tool_choice none).
    When `lazy` is true the grammar applies only from the first trigger match on.
    """

    grammar: str
    triggers: tuple[Trigger, ...]
    preserved_tokens: tuple[str, ...]
    lazy: bool
