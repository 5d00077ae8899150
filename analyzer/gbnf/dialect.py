"""Schema rules for a JSON dialect whose strings sit between a quote marker (Gemma's `<|"|>`).

Such a template writes `{country:<|"|>FR<|"|>,open:false,range:{max:5}}`: JSON structure,
strings between the marker, keys bare or quoted, literals as JSON or as Python spells them
(Gemma writes a null as `None`). Lengths and string formats are not checked: a quoted
string is any text without the marker.
"""

from __future__ import annotations

import re
from typing import Any

from analyzer.gbnf.builder import GrammarBuilder, alt, chars, seq
from analyzer.gbnf.json_schema import SchemaConverter
from analyzer.gbnf.until import text_excluding

# What a bare key may hold: anything but the dialect's structure and whitespace (and the
# quote marker's first character, else llguidance's greedy lexer reads `<|"|>k` as a key).
_BARE_KEY_EXCLUDED = ",:\\[\\]{}\\x00-\\x20"
_BARE_KEY = re.compile(r"[^,:\[\]{}\s]+")


class QuotedDialectConverter(SchemaConverter):
    """Add rules for values written in a quote-marker dialect."""

    def __init__(self, builder: GrammarBuilder, quote: str) -> None:
        super().__init__(builder, python_dicts=True, sorted_keys=True)
        self.quote = quote
        self.flavour = f"quoted:{quote}"

    def _around(self, content: str) -> str:
        return seq(chars(self.quote), content, chars(self.quote))

    def _sized_string(self, low: int, high: int | None) -> str:
        text = text_excluding(self.builder, [self.quote], "quoted-text")
        return self.builder.add("quoted-string", self._around(text))

    def _quoted(self, content: str) -> str:
        return self._around(content)

    def const(self, value: Any) -> str:
        """Match exactly this value, strings between the quote marker."""
        if isinstance(value, str):
            return self._around(chars(value))
        return super().const(value)

    def _key(self, key: str) -> str:
        quoted = self._around(chars(key))
        self.builder.spell(key)  # an undeclared key's class reads it too
        bare = _BARE_KEY.fullmatch(key) and not key.startswith(self.quote[0])
        return alt(chars(key), quoted) if bare else quoted

    def _key_stop(self) -> str:
        """The quote's first character, spelled for a character class ("" if unsafe there)."""
        lead = self.quote[0]
        if lead.isalnum() or lead in "_-^\\[]":
            return ""
        return '\\"' if lead == '"' else lead

    def any_key(self) -> str:
        """An undeclared key: bare, or quoted like a string."""
        bare = self.builder.add("bare-key", f"[^{_BARE_KEY_EXCLUDED}{self._key_stop()}]+")
        return alt(bare, self.string())
