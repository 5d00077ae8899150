"""Tests for analyzer/gbnf/lint.py: the grammar rules llama.cpp enforces."""

from __future__ import annotations

import pytest

from analyzer.gbnf.lint import GbnfProblem, check_gbnf_strict


def _messages(text: str, kind: str = "error") -> list[str]:
    return [str(p) for p in check_gbnf_strict(text) if p.kind == kind]


def test_a_clean_grammar_has_no_problems() -> None:
    text = (
        "# comment line\n"
        'root ::= greeting (" " name)* | ("x"\n'
        '  | "y") |\n'
        '  "z"  # trailing comment\n'
        'greeting ::= "hi" [a-z\\-]? [^"\\\\\\x00-\\x1f]{0,3}\n'
        "name ::= [A-Z] [a-z]+\n"
    )
    assert _messages(text) == []


def test_underscore_in_a_rule_name_is_reported_where_it_is_defined_and_used() -> None:
    assert _messages('root ::= my_rule\nmy_rule ::= "x"\n') == [
        "line 1, column 10: rule name `my_rule` contains `_`: llama.cpp allows only letters, "
        "digits and '-'",
        "line 2, column 1: rule name `my_rule` contains `_`: llama.cpp allows only letters, "
        "digits and '-'",
    ]


def test_direct_left_recursion_is_reported() -> None:
    assert _messages('root ::= root "x" | "y"\n') == [
        "line 1, column 1: rule `root` is left-recursive: root -> root"]


def test_left_recursion_through_an_empty_prefix_is_reported() -> None:
    text = 'root ::= list\nlist ::= maybe list "," | "x"\nmaybe ::= "a"?\n'
    assert _messages(text) == ["line 2, column 1: rule `list` is left-recursive: list -> list"]


def test_left_recursion_across_rules_names_the_cycle() -> None:
    text = 'root ::= a\na ::= b "x"\nb ::= a | "y"\n'
    assert _messages(text) == ["line 2, column 1: rule `a` is left-recursive: a -> b -> a"]


def test_right_recursion_is_fine() -> None:
    assert _messages('root ::= "(" root ")" | "x" root | ""\n') == []


def test_star_over_something_that_can_be_empty_is_left_recursive_in_llama_cpp() -> None:
    assert _messages('root ::= ("a"?)*\n') == [
        "line 1, column 10: in `root`, an unbounded repetition of something that can match "
        "empty text (llama.cpp makes it a left-recursive rule)"]


def test_bounded_repetition_of_an_optional_item_is_fine() -> None:
    assert _messages('root ::= ("a"?){0,4}\n') == []


def test_undefined_rule_and_missing_root_are_reported() -> None:
    assert _messages("root ::= nothing\n") == [
        "line 1, column 10: rule `nothing` is used in `root` but never defined"]
    assert _messages('start ::= "x"\n') == [
        "line 1, column 1: no `root` rule: llama.cpp starts from `root`"]


def test_unknown_escape_is_reported() -> None:
    assert _messages('root ::= "a\\q"\n') == [
        "line 1, column 12: unknown escape \\q: llama.cpp knows \\x \\u \\U \\t \\r \\n \\\\ "
        "\\\" \\[ \\] \\-"]


def test_short_hex_escape_is_reported() -> None:
    assert _messages('root ::= "\\x4"\n') == [
        "line 1, column 11: escape \\x needs 2 hex digits, found '4\"'"]


def test_a_rule_cannot_continue_on_the_next_line_outside_parentheses() -> None:
    assert _messages('root ::= "x"\n  | "y"\n') == [
        "line 2, column 3: expected a rule name, found '| \"y\"\\n'"]


def test_unterminated_literal_is_reported() -> None:
    assert _messages('root ::= "abc\n') == [
        "line 1, column 10: expected a closing '\"' for this literal, found '\"abc\\n'"]


def test_too_many_repetitions_are_reported() -> None:
    assert _messages('root ::= "a"{2001}\n') == [
        "line 1, column 13: repetition minimum 2001 is above llama.cpp's limit of 2000"]
    assert _messages('root ::= ("x"{0,100}){0,30}\n') == [
        "line 1, column 10: this repetition copies about 3030 rules; llama.cpp refuses 2000 "
        "or more"]


def test_duplicate_rule_is_reported() -> None:
    assert _messages('root ::= "a"\nroot ::= "b"\n') == [
        "line 2, column 1: rule `root` is defined twice; llama.cpp keeps only the last "
        "definition"]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('root ::= "\\u00e9"\n', "llguidance misreads \\u escapes"),
        ('root ::= [a\\-z]\n', "llguidance rejects the escape \\-"),
        ('root ::= "a\nb"\n', "raw newline inside a literal"),
        ('root ::= "a" .\n', "llguidance's '.' does not match newlines"),
        ("root ::= <[12]>\n", "token references need the model's vocabulary"),
    ],
)
def test_llguidance_portability_problems_are_flagged_separately(text: str, fragment: str) -> None:
    problems = check_gbnf_strict(text)
    assert [p.kind for p in problems] == ["portability"]
    assert fragment in problems[0].message


def test_problem_prints_its_position() -> None:
    assert str(GbnfProblem(3, 7, "bad")) == "line 3, column 7: bad"
