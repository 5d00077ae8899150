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

    def as_file(self) -> str:
        """The grammar as a .gbnf file: whether it is lazy, its triggers and the preserved
        tokens as leading comments (a server needs them beside the grammar to apply it)."""
        lines = [f"# lazy: {'yes' if self.lazy else 'no'}"]
        lines += [f"# trigger ({t.kind.value}): {t.value!r}" for t in self.triggers]
        if self.preserved_tokens:
            lines.append("# preserved tokens: " + " ".join(repr(t) for t in self.preserved_tokens))
        if not self.grammar:
            lines.append("# no grammar: the request needs no constraint")
        return "\n".join(lines) + "\n" + self.grammar
