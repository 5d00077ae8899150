"""Run text through a GBNF grammar with llguidance, byte by byte.

llguidance is imported on first use, so building grammars never needs it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

from analyzer.gbnf.errors import GrammarCompileError

if TYPE_CHECKING:
    import llguidance

_EOS = 256


class _ByteTokenizer:
    """A 257-token vocabulary: one token per byte value, then end-of-sequence."""

    eos_token_id = _EOS
    bos_token_id = None
    tokens = [bytes([b]) for b in range(256)] + [b"\xff<eos>"]
    special_token_ids = [_EOS]

    def __call__(self, text: bytes | str) -> list[int]:
        return list(text.encode("utf-8") if isinstance(text, str) else text)


@lru_cache(maxsize=1)
def byte_tokenizer() -> llguidance.LLTokenizer:
    """Build (once) the byte-level tokenizer every check runs on."""
    import llguidance

    return llguidance.LLTokenizer(llguidance.TokenizerWrapper(_ByteTokenizer()))


def compile_gbnf(grammar: str) -> str:
    """Convert GBNF to an llguidance grammar, or raise GrammarCompileError saying why."""
    return _compile("gbnf", grammar)


# Sized for a corpus: its ~90 templates need ~110 distinct grammars, and a worker cycling
# through them with a smaller cache would convert each anew (~15 ms in llguidance's Python
# GBNF -> Lark). A compiled grammar is ~7 KB of text.
@lru_cache(maxsize=1024)
def _compile(kind: Literal["gbnf", "lark"], grammar: str) -> str:
    """Compile a grammar of llguidance's `kind` and validate it on the byte tokenizer."""
    import llguidance

    try:
        compiled = llguidance.grammar_from(kind, grammar)
    except ValueError as exc:
        raise GrammarCompileError(str(exc), engine="llguidance") from exc
    problem = llguidance.LLMatcher.validate_grammar(compiled, byte_tokenizer())
    if problem:
        raise GrammarCompileError(problem, engine="llguidance")
    return compiled


@dataclass(frozen=True)
class GrammarMatch:
    """How far a text got through a grammar."""

    text: str
    accepted: bool  # the whole text matched and the grammar may end there
    offset: int  # characters consumed before the grammar refused (len(text) if none refused)
    error: str  # llguidance's message when the matcher failed, else ""

    def describe(self) -> str:
        """Say whether the text matched, and if not where it stopped, with a caret."""
        if self.accepted:
            return "accepted"
        line_start = self.text.rfind("\n", 0, self.offset) + 1
        line_end = self.text.find("\n", self.offset)
        line = self.text[line_start : line_end if line_end >= 0 else len(self.text)]
        found = repr(self.text[self.offset : self.offset + 20]) or "end of text"
        what = "text ended too early" if self.offset >= len(self.text) else f"found {found}"
        caret = " " * (self.offset - line_start) + "^"
        return f"rejected at offset {self.offset}: {what}\n{line}\n{caret}"


def _char_offset(text: str, consumed_bytes: int) -> int:
    return len(text.encode("utf-8")[:consumed_bytes].decode("utf-8", errors="ignore"))


def match_text(grammar: str, text: str) -> GrammarMatch:
    """Feed text to the grammar byte by byte and report where it stopped."""
    return match_compiled(compile_gbnf(grammar), text)


def compile_lark(grammar: str) -> str:
    """Compile an llguidance Lark grammar (`%json{...}` allowed), or raise GrammarCompileError."""
    return _compile("lark", grammar)


def match_lark(grammar: str, text: str) -> GrammarMatch:
    """Feed text to a Lark grammar byte by byte and report where it stopped."""
    return match_compiled(compile_lark(grammar), text)


# A matcher holds ~0.5 MiB: 128 cover a corpus' grammars (~60 MiB at most).
@lru_cache(maxsize=128)
def pristine_matcher(compiled: str) -> llguidance.LLMatcher:
    """A matcher that has consumed nothing: copying it costs ~1,000x less than building one."""
    import llguidance

    return llguidance.LLMatcher(byte_tokenizer(), compiled, log_level=0)


def match_compiled(compiled: str, text: str) -> GrammarMatch:
    """Run text through a compiled llguidance grammar."""
    matcher = pristine_matcher(compiled).deep_copy()
    data = text.encode("utf-8")
    consumed = matcher.try_consume_tokens(list(data))
    error = matcher.get_error() if matcher.is_error() else ""
    accepted = consumed == len(data) and matcher.is_accepting() and not error
    return GrammarMatch(text, accepted, _char_offset(text, consumed), error)


def grammar_accepts(grammar: str, text: str) -> bool:
    """Tell whether the grammar matches the whole text."""
    return match_text(grammar, text).accepted


def rejection_offset(grammar: str, text: str) -> int | None:
    """Return the character offset where the grammar refuses text, or None if it accepts."""
    found = match_text(grammar, text)
    return None if found.accepted else found.offset
