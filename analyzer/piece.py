"""A slice of a render that remembers where it came from, for exact provenance."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Piece:
    """text == render[pos : pos + len(text)] for the render it was cut from."""

    text: str
    pos: int

    @staticmethod
    def cut(render: str, start: int, end: int) -> Piece:
        """Cut render[start:end] (an empty piece if end <= start)."""
        return Piece(render[start:end], start) if end > start else Piece("", start)

    @property
    def end(self) -> int:
        return self.pos + len(self.text)

    def strip(self) -> Piece:
        """Drop surrounding whitespace, keeping the position exact."""
        lead = len(self.text) - len(self.text.lstrip())
        return Piece(self.text.strip(), self.pos + lead)

    def head(self, length: int) -> Piece:
        """Return the first length characters."""
        return Piece(self.text[:length], self.pos)

    def tail(self, length: int) -> Piece:
        """Return the last length characters."""
        start = len(self.text) - length
        return Piece(self.text[start:], self.pos + start)

    def drop_head(self, length: int) -> Piece:
        """Return the text after the first length characters."""
        return Piece(self.text[length:], self.pos + length)

    def drop_tail(self, length: int) -> Piece:
        """Return the text before the last length characters."""
        return Piece(self.text[: len(self.text) - length], self.pos)

    def slice(self, start: int, end: int) -> Piece:
        """Return text[start:end] as a piece."""
        return Piece(self.text[start:end], self.pos + start)
