"""diff_split (with marker and word boundary fixing), segmentize_markers and helpers."""

from __future__ import annotations

from analyzer.analysis.diff import (
    after_common_suffix,
    diff_split,
    is_marker,
    is_marker_group,
    marker_run_after,
    marker_run_before,
    segmentize_markers,
    tag_closer_len,
    until_common_prefix,
)
from analyzer.model import DiffSplit, Segment, SegmentKind


def test_it_splits_plain_text_into_prefix_middles_and_suffix() -> None:
    assert diff_split("the cat sat", "the dog sat") == DiffSplit("the ", "cat", "dog", " sat")


def test_the_parts_rebuild_both_inputs() -> None:
    a, b = "<s>hello <b>world</b></s>", "<s>hello <i>there</i></s>"
    split = diff_split(a, b)
    assert split.prefix + split.left + split.suffix == a
    assert split.prefix + split.right + split.suffix == b


def test_it_never_cuts_an_angle_marker_in_the_prefix() -> None:
    split = diff_split("<a><tool_call>x", "<a><tool_response>x")
    assert split == DiffSplit("<a>", "<tool_call>", "<tool_response>", "x")


def test_it_never_cuts_an_angle_marker_in_the_suffix() -> None:
    split = diff_split("x<|im_end|>", "y<|eom_end|>")
    assert split.suffix == ""
    assert split.left == "x<|im_end|>" and split.right == "y<|eom_end|>"


def test_it_keeps_a_shared_closing_marker_in_the_suffix() -> None:
    assert diff_split("<r>one</r>", "<r>two</r>") == DiffSplit("<r>", "one", "two", "</r>")


def test_it_never_cuts_a_bracket_marker() -> None:
    split = diff_split("[TOOL_CALLS]a", "[TOOL_RESULTS]a")
    assert split.prefix == "" and split.left == "[TOOL_CALLS]"
    assert split.right == "[TOOL_RESULTS]" and split.suffix == "a"


def test_a_marker_differing_in_one_character_shows_whole_on_both_sides() -> None:
    split = diff_split("pre<think>post", "pre<thank>post")
    assert (split.left, split.right) == ("<think>", "<thank>")


def test_it_never_cuts_a_word() -> None:
    split = diff_split("x A_MSG hi", "x Action: go")
    assert split.prefix == "x " and split.left == "A_MSG hi" and split.right == "Action: go"


def test_ids_sharing_a_prefix_differ_whole() -> None:
    split = diff_split('"id": "call00001"', '"id": "call99999"')
    assert (split.left, split.right) == ("call00001", "call99999")


def test_an_insertion_leaves_the_other_side_empty() -> None:
    assert diff_split("<a></a>", "<a>R</a>") == DiffSplit("<a>", "", "R", "</a>")


def test_identical_texts_are_all_prefix() -> None:
    assert diff_split("<x>same</x>", "<x>same</x>") == DiffSplit("<x>same</x>", "", "", "")


def test_prefix_and_suffix_do_not_overlap_on_repeated_text() -> None:
    split = diff_split("aXa", "aXaXa")
    assert split.prefix + split.left + split.suffix == "aXa"
    assert split.prefix + split.right + split.suffix == "aXaXa"
    assert len(split.prefix) + len(split.suffix) <= 3


def test_empty_inputs() -> None:
    assert diff_split("", "<a>") == DiffSplit("", "", "<a>", "")
    assert diff_split("", "") == DiffSplit("", "", "", "")


def test_segmentize_separates_markers_from_text() -> None:
    assert segmentize_markers("<think>hi</think>\n[ARGS]{}") == [
        Segment(SegmentKind.MARKER, "<think>"),
        Segment(SegmentKind.TEXT, "hi"),
        Segment(SegmentKind.MARKER, "</think>"),
        Segment(SegmentKind.TEXT, "\n"),
        Segment(SegmentKind.MARKER, "[ARGS]"),
        Segment(SegmentKind.TEXT, "{}"),
    ]


def test_segmentize_reads_unicode_special_tokens_as_markers() -> None:
    segments = segmentize_markers("<｜tool▁calls▁begin｜>x")
    assert segments[0] == Segment(SegmentKind.MARKER, "<｜tool▁calls▁begin｜>")


def test_comparisons_and_json_arrays_are_not_markers() -> None:
    assert not is_marker("< b >")
    assert not is_marker('["a", "b"]')
    assert not is_marker("[1, 2]")
    assert is_marker("[BEGIN FINAL RESPONSE]")
    assert is_marker('<invoke name="get_weather">')


def test_segmentize_of_plain_text_is_one_text_segment() -> None:
    assert segmentize_markers("a < b and c > d") == [Segment(SegmentKind.TEXT, "a < b and c > d")]


def test_until_common_prefix_stops_where_both_variants_agree() -> None:
    assert until_common_prefix("really want a FUNCTION call", "FUNCTION alpha",
                               "FUNCTION beta") == "really want a "
    assert until_common_prefix("some text", "1234", "abcd") == ""


def test_after_common_suffix_starts_where_both_variants_agree() -> None:
    assert after_common_suffix("really want a FUNCTION call", "first FUNCTION",
                               "second FUNCTION") == " call"


def test_marker_groups_take_a_word_between_two_markers() -> None:
    text = "x<|channel|>analysis<|message|>y"
    assert marker_run_before(text, len(text) - 1) == (1, len(text) - 1)
    assert marker_run_after(text, 1) == (1, len(text) - 1)


def test_marker_groups_stop_at_whitespace() -> None:
    text = "<|im_start|>assistant\n<think>"
    assert marker_run_before(text, len(text)) == (text.index("<think>"), len(text))


def test_a_trailing_word_group_is_taken_only_when_asked() -> None:
    text = "<|channel>thought\nR"
    end = text.index("\n")
    assert marker_run_before(text, end) is None
    assert marker_run_before(text, end, trailing_word=True) == (0, end)


def test_a_marker_group_is_markers_and_words_without_spaces() -> None:
    assert is_marker_group("<|begin|>assistant")
    assert is_marker_group("<|start|>assistant<|channel|>")
    assert not is_marker_group("<|end|> then text")
    assert not is_marker_group("")


def test_a_long_near_miss_is_refused_at_once() -> None:
    # Words are matched possessively: a failing match is not retried word split by word split.
    assert not is_marker_group("x" * 250 + " ")


def test_a_marker_that_closes_an_open_tag_name_is_measured() -> None:
    text = "<|open|>tools<|sep|><|open|>call"
    assert tag_closer_len(text, len("<|open|>tools")) == len("<|sep|>")
    assert tag_closer_len(text, len("<|open|>tools<|sep|>")) == 0  # nothing left open
    assert tag_closer_len("<|im_start|>assistant\n<tool_call>", 22) == 0  # a newline ends it
