"""JSON from requests, form fields and websocket frames: anything that fails to decode is a
ValueError the caller already answers with a clear error.

json's decoder recurses once per level of nesting, so a body of a few kilobytes of `[` raises
RecursionError, which no caller expects: the request would end in a 500 and the live socket
would close. Here it is a ValueError that says what was found."""

from __future__ import annotations

import json
from typing import Any


class TooDeep(ValueError):
    """The text nests arrays or objects deeper than the decoder recurses."""


def loads(text: str | bytes) -> Any:
    """Decode text as json.loads does; nesting deeper than Python recurses raises TooDeep (a
    ValueError), like any other text that is not JSON."""
    try:
        return json.loads(text)
    except RecursionError:
        raise TooDeep("nested deeper than this server reads (thousands of levels of [ or {)"
                      ) from None
