"""Split two renders into common prefix, differing middles and common suffix, marker-aware.

A marker is a whole `<...>` or `[...]` token (`<think>`, `<|tool_call_begin|>`,
`[TOOL_CALLS]`). Diff boundaries never cut through one, so a marker that differs between
two renders shows up whole on both sides.
"""

from __future__ import annotations

import bisect
import re
from functools import lru_cache

from analyzer.model import DiffSplit, Segment, SegmentKind

# No whitespace right after the opener keeps comparisons such as `a < b > c` out.
_ANGLE = r"<[^\s<>][^<>\n]{0,255}>"
# Brackets holding quotes, braces or commas are JSON arrays, not markers.
_SQUARE = r"\[[^\s\[\]{}\"'<>,][^\[\]{}\"'<>\n,]{0,63}\]"
MARKER_RE = re.compile(f"{_ANGLE}|{_SQUARE}")
_WORD_RE = re.compile(r"[^\s<>\[\]]{1,32}")


@lru_cache(maxsize=512)
def marker_spans(text: str) -> tuple[tuple[int, int], ...]:
    """Return the (start, end) of every marker in text, in order."""
    return tuple(m.span() for m in MARKER_RE.finditer(text))


def segmentize_markers(text: str) -> list[Segment]:
    """Cut text into markers and the text fragments between them."""
    segments: list[Segment] = []
    pos = 0
    for start, end in marker_spans(text):
        if start > pos:
            segments.append(Segment(SegmentKind.TEXT, text[pos:start]))
        segments.append(Segment(SegmentKind.MARKER, text[start:end]))
        pos = end
    if pos < len(text):
        segments.append(Segment(SegmentKind.TEXT, text[pos:]))
    return segments


# Words are taken possessively: `<` and `[` only open markers, so nothing is retried.
_GROUP_RE = re.compile(f"(?:{_ANGLE}|{_SQUARE}|[^\\s<>\\[\\]]++)+")


def is_marker_group(text: str) -> bool:
    """Tell whether text is markers and words without spaces, such as `<|begin|>assistant`."""
    return len(text) <= 256 and _GROUP_RE.fullmatch(text) is not None


_OPEN_TAG_NAME_RE = re.compile(f"(?:{_ANGLE}|{_SQUARE})[^\\s<>\\[\\]]{{1,32}}\\Z")


def tag_closer_len(text: str, pos: int) -> int:
    """Length of the marker at pos that closes a tag name left open right before it.

    In `<|open|>tools<|sep|>` the `<|sep|>` ends the tag `<|open|>tools`; a cut at pos that
    separates them leaves the name open. Returns 0 when pos does not split such a tag.
    """
    if _OPEN_TAG_NAME_RE.search(text, max(0, pos - 320), pos) is None:
        return 0
    following = marker_run_after(text, pos, with_word=False)
    return 0 if following is None else following[1] - following[0]


def is_marker(text: str) -> bool:
    """Tell whether text is exactly one marker."""
    return MARKER_RE.fullmatch(text) is not None


def common_prefix_len(a: str, b: str) -> int:
    """Return the length of the longest common prefix of a and b."""
    limit = min(len(a), len(b))
    if a[:limit] == b[:limit]:
        return limit
    low, high = 0, limit  # binary search on slices runs at C speed
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def common_suffix_len(a: str, b: str, limit: int | None = None) -> int:
    """Return the length of the longest common suffix of a and b, at most limit."""
    top = min(len(a), len(b)) if limit is None else min(limit, len(a), len(b))
    low, high = 0, top
    while low < high:
        mid = (low + high + 1) // 2
        if a[len(a) - mid :] == b[len(b) - mid :]:
            low = mid
        else:
            high = mid - 1
    return low


def marker_around(text: str, pos: int) -> tuple[int, int] | None:
    """Return the span of the marker that strictly contains position pos, if any."""
    spans = marker_spans(text)
    index = bisect.bisect_right(spans, (pos, len(text) + 1)) - 1
    if index >= 0 and spans[index][0] < pos < spans[index][1]:
        return spans[index]
    return None


def _fixed_prefix_len(a: str, b: str, length: int) -> int:
    while True:
        cut = length
        for text in (a, b):
            span = marker_around(text, cut)
            if span is not None:
                cut = span[0]
        if cut == length:
            return length
        length = cut


def _fixed_suffix_len(a: str, b: str, length: int) -> int:
    while True:
        cut = length
        for text in (a, b):
            span = marker_around(text, len(text) - cut)
            if span is not None:
                cut = len(text) - span[1]
        if cut == length:
            return length
        length = cut


def _is_word(text: str, index: int) -> bool:
    return 0 <= index < len(text) and (text[index].isalnum() or text[index] == "_")


def _word_prefix_len(a: str, b: str, length: int) -> int:
    """Move a cut inside a word (in either text) back to the word's start."""
    while length > 0 and _is_word(a, length - 1) and (_is_word(a, length) or _is_word(b, length)):
        length -= 1
    return length


def _word_suffix_len(a: str, b: str, length: int) -> int:
    """Move a cut inside a word (in either text) forward to the word's end."""
    while length > 0 and _is_word(a, len(a) - length) and (
        _is_word(a, len(a) - length - 1) or _is_word(b, len(b) - length - 1)
    ):
        length -= 1
    return length


def diff_split(a: str, b: str) -> DiffSplit:
    """Split a and b into common prefix, their own middles, and common suffix.

    Cuts never fall inside a marker of either text, nor inside a word, so what differs
    shows up whole (`<tool_call>` against `<tool_response>`, `call00001` against `call99999`).
    """
    prefix_len = common_prefix_len(a, b)
    while True:
        fixed = _fixed_prefix_len(a, b, _word_prefix_len(a, b, prefix_len))
        if fixed == prefix_len:
            break
        prefix_len = fixed
    room = min(len(a), len(b)) - prefix_len
    suffix_len = common_suffix_len(a, b, room)
    while True:
        fixed = _fixed_suffix_len(a, b, _word_suffix_len(a, b, suffix_len))
        if fixed == suffix_len:
            break
        suffix_len = fixed
    return DiffSplit(
        prefix=a[:prefix_len],
        left=a[prefix_len : len(a) - suffix_len],
        right=b[prefix_len : len(b) - suffix_len],
        suffix=a[len(a) - suffix_len :],
    )


def common_prefix_fixed(a: str, b: str) -> int:
    """Return the common prefix length of a and b, cut back so no marker of either is split."""
    return _fixed_prefix_len(a, b, common_prefix_len(a, b))


def common_suffix_fixed(a: str, b: str) -> int:
    """Return the common suffix length of a and b, cut back so no marker of either is split."""
    return _fixed_suffix_len(a, b, common_suffix_len(a, b))


def last_marker_end(text: str, low: int = 0, high: int | None = None) -> int:
    """Return the end of the last marker lying inside text[low:high], or low if none."""
    top = len(text) if high is None else high
    ends = [end for start, end in marker_spans(text) if low <= start and end <= top]
    return ends[-1] if ends else low


def first_marker_start(text: str, low: int = 0, high: int | None = None) -> int:
    """Return the start of the first marker lying inside text[low:high], or high if none."""
    top = len(text) if high is None else high
    for start, end in marker_spans(text):
        if low <= start and end <= top:
            return start
    return top


def until_common_prefix(full: str, left: str, right: str) -> str:
    """Return full up to the first occurrence of the common prefix of left and right."""
    common = left[: common_prefix_len(left, right)]
    if not common:
        return ""
    index = full.find(common)
    return full[:index] if index >= 0 else ""


def after_common_suffix(full: str, left: str, right: str) -> str:
    """Return full after the last occurrence of the common suffix of left and right."""
    length = common_suffix_len(left, right)
    if length == 0:
        return ""
    common = left[len(left) - length :]
    index = full.rfind(common)
    return full[index + len(common) :] if index >= 0 else ""


def marker_run_before(
    text: str, end: int, *, with_word: bool = True, trailing_word: bool = False
) -> tuple[int, int] | None:
    """Find the marker group ending at end: `marker`, or `marker word marker` if allowed.

    With trailing_word, a group may also be `marker word` (as in `<|channel>thought`).
    """
    spans = marker_spans(text)
    index = bisect.bisect_right(spans, (end, len(text) + 1)) - 1
    if index < 0:
        return None
    if spans[index][1] != end:
        if trailing_word and _WORD_RE.fullmatch(text, spans[index][1], end) is not None:
            return spans[index][0], end
        return None
    start = spans[index][0]
    if with_word and index > 0:
        word = _WORD_RE.fullmatch(text, spans[index - 1][1], start)
        if word is not None:
            start = spans[index - 1][0]
    return start, end


def marker_run_after(text: str, start: int, *, with_word: bool = True) -> tuple[int, int] | None:
    """Find the marker group starting at start: `marker`, or `marker word marker` if allowed."""
    spans = marker_spans(text)
    index = bisect.bisect_left(spans, (start, -1))
    if index >= len(spans) or spans[index][0] != start:
        return None
    end = spans[index][1]
    if with_word and index + 1 < len(spans):
        word = _WORD_RE.fullmatch(text, end, spans[index + 1][0])
        if word is not None:
            end = spans[index + 1][1]
    return start, end


def skip_space_back(text: str, pos: int, floor: int = 0) -> int:
    """Move pos left over whitespace, not below floor."""
    while pos > floor and text[pos - 1].isspace():
        pos -= 1
    return pos


def skip_space(text: str, pos: int, ceiling: int | None = None) -> int:
    """Move pos right over whitespace, not past ceiling."""
    top = len(text) if ceiling is None else ceiling
    while pos < top and text[pos].isspace():
        pos += 1
    return pos
