"""Remember a compiled template's renders: the same inputs render the same text again.

Verifying a template, its robustness column and the generated parser's prompt contexts render
the same conversations over and over (70% of a corpus template's evaluation renders repeat
one made a moment before). A render is a pure function of the template, its clock and its
plain-data inputs, so a repeat can return the text it gave the first time. Only successful
renders are kept (an error carries its traceback, which keeps frames alive), and only up to a
character budget per template, so a template that renders large texts keeps few of them.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

MEMO_CHARS = 256 * 1024  # per compiled template: ~25 distinct renders of a few KB each fit


class RenderMemo:
    """The latest renders of one compiled template, keyed by their inputs, within a budget."""

    def __init__(self, max_chars: int = MEMO_CHARS) -> None:
        self.max_chars = max_chars
        self._chars = 0
        self._texts: OrderedDict[str, str] = OrderedDict()

    def get(self, key: str) -> str | None:
        """The text rendered for these inputs, or None if it is not remembered."""
        text = self._texts.get(key)
        if text is not None:
            self._texts.move_to_end(key)
        return text

    def put(self, key: str, text: str) -> None:
        """Remember a render, forgetting the oldest ones past the budget."""
        size = len(key) + len(text)
        if size > self.max_chars or key in self._texts:
            return
        self._texts[key] = text
        self._chars += size
        while self._chars > self.max_chars:
            old_key, old_text = self._texts.popitem(last=False)
            self._chars -= len(old_key) + len(old_text)

    def __len__(self) -> int:
        return len(self._texts)


def memo_key(context: dict[str, Any]) -> str:
    """The key of a render's inputs: the repr of its plain-data context.

    The context holds only dicts, lists, tuples, str, int, float, bool and None (anything else
    was replaced by a placeholder), whose repr keeps every type and order the template can see:
    `True` is not `1`, `1.0` is not `1`, a tuple is not a list, keys stay in their order.
    """
    return repr(context)
