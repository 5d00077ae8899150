"""Gemma 4's quoted dialect is read by one loop with a stack (the mapper), and in a whole parse
that records no failures first by one regex of values a few containers deep (the parse). Both
must read exactly what the recursive reading read before them, kept here as the reference:
the same value, end, JSON text and error kind, for values cut, edited and nested deeper than
the regex goes, and a whole parse must end where a traced one (which takes no regex) ends.
A stream held on a quoted string skips its chunks and must still equal one that runs them."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest
from rendered_calls import CORPUS, generated_call, streamed
from skipping_streams import AlwaysRuns, CountsSkips

from analyzer.generator.dialect import DialectValue, Incomplete, QuotedDialect
from analyzer.peg.state import FAIL, MatchState

QUOTE = '<|"|>'
GEMMA = QuotedDialect(QUOTE)
SPACE = re.compile(r"\s*")
SCALAR = re.compile(r"[^,:\[\]{}\s]+")
PYTHON_WORDS: dict[str, Any] = {"None": None, "True": True, "False": False}


class RecursiveReading:
    """The dialect's reading before this change: a call per value, item, member and scalar."""

    def read(self, text: str, pos: int, final: bool = False) -> tuple[Any, int]:
        pos = SPACE.match(text, pos).end()  # type: ignore[union-attr]
        if text.startswith(QUOTE, pos):
            return self.read_string(text, pos)
        if pos >= len(text):
            raise Incomplete
        if text[pos] == "[":
            return self.read_items(text, pos + 1, "]", self.read, final)
        if text[pos] == "{":
            return self.read_items(text, pos + 1, "}", self.read_member, final)
        return self.read_scalar(text, pos, final)

    def read_string(self, text: str, pos: int) -> tuple[str, int]:
        start = pos + len(QUOTE)
        end = text.find(QUOTE, start)
        if end < 0:
            raise Incomplete
        return text[start:end], end + len(QUOTE)

    def read_member(self, text: str, pos: int, final: bool) -> tuple[tuple[str, Any], int]:
        pos = SPACE.match(text, pos).end()  # type: ignore[union-attr]
        if text.startswith(QUOTE, pos):
            key, pos = self.read_string(text, pos)
        else:
            found = SCALAR.match(text, pos)
            if found is None:
                raise Incomplete if pos >= len(text) else ValueError("expected a key")
            key, pos = found.group(), found.end()
        pos = SPACE.match(text, pos).end()  # type: ignore[union-attr]
        if pos >= len(text):
            raise Incomplete
        if text[pos] != ":":
            raise ValueError("expected `:`")
        value, pos = self.read(text, pos + 1, final)
        return (key, value), pos

    def read_items(self, text: str, pos: int, close: str, item: Any,
                   final: bool) -> tuple[Any, int]:
        items: list[Any] = []
        pos = SPACE.match(text, pos).end()  # type: ignore[union-attr]
        while True:
            if pos >= len(text):
                raise Incomplete
            if text[pos] == close:
                return (dict(items) if close == "}" else items), pos + 1
            if items:
                if text[pos] != ",":
                    raise ValueError(f"expected `,` or `{close}`")
                pos += 1
            value, pos = item(text, pos, final)
            items.append(value)
            pos = SPACE.match(text, pos).end()  # type: ignore[union-attr]

    @staticmethod
    def read_scalar(text: str, pos: int, final: bool) -> tuple[Any, int]:
        found = SCALAR.match(text, pos)
        if found is None:
            raise ValueError("expected a value")
        if found.end() >= len(text) and not final:
            raise Incomplete
        token = found.group()
        if token in PYTHON_WORDS:
            return PYTHON_WORDS[token], found.end()
        try:
            return json.loads(token), found.end()
        except ValueError:
            return token, found.end()


REFERENCE = RecursiveReading()
SAMPLES = [
    "5", "-0", "007", "1e5", "1.50", "NaN", "-Infinity", "true", "True", "None", "null", "x-y",
    "9" * 30, '"quoted"', '"a', "a<|\"|>b", "<|\"|>text, with: [brackets]{}<|\"|>",
    "[<|\"|>.cpp<|\"|>,<|\"|>.json<|\"|>]", "[ 1 , 2 ,3 ]", "[]", "{}", "[ ]", "{ }",
    "{a:1,a:2,b:<|\"|>x<|\"|>}", "{<|\"|>quoted key<|\"|>: [1, {b: []}]}",
    "[{email:<|\"|>ada@example.org<|\"|>,name:<|\"|>Ada<|\"|>},{email:<|\"|>d@e.org<|\"|>}]",
    "{a:{b:{c:{d:{e:1}}}}}", "[[[[[1]]]]]", "[[[1,[2]],3]]", "{k:[{x:[1,2]},{y:{z:3}}]}",
    " \n [1,\t2]", "\u3000[1,\u00a02]", "[1 2]", "[1,]", "[,1]", "{a 1}", "{:1}", "{a:}",
    "[<|\"|>unclosed]", "{a:1", "[1", "<|\"|>", "", " ",
    "{<|\"|>a<|\"|> x <|\"|>:1}", "{a<|\"|>b:1}", "{k:<|\"|>v<|\"|> <|\"|>:2}", "{k:1.5e3}",
    "{k:<|\"|>v<|\"|>x,j:1}", "{\n k \n:\n <|\"|>v<|\"|> \n}",
    # What the translation to JSON (QuotedDialect.translated) must refuse or read alike.
    '{"a:1}', '{a\\n:1}', '{a"b:1}', '[<|"|>back\\slash "q"\n\t\x01\u2028<|"|>]',
    "{k:[True,None,False,x]}", "[NaN,-Infinity,Infinity,1E5,-0,01,+1,.5,1.,0x1,-]",
    "{a:1,<|\"|>a<|\"|>:2,b:3,a:4}", "[1,\x002]", "{a\x00:1}", "{a:\x00}",
    "[<|\"|>a<|\"|><|\"|>b<|\"|>]", '["x"]', "[<|\"|>\ud800<|\"|>]",
    "[1]  ", "{ключ:<|\"|>значение<|\"|>,a.b-c:1,1:2,true:null}", "{k:1,}", "{,}",
    "{k:<|\"|>v<|\"|>:1}", "[<|\"|>v<|\"|>k:1]", "[a<|\"|>,b<|\"|>]", "{k:-1.5e-3}",
    "[\x0b1]", "{\u00a0k:1}",
]
# Too long to cut at every character: read whole and inside a container only.
LONG_SAMPLES = ["[" + "7" * 5000 + "]", "{k:" + "7" * 5000 + "}", "[" * 50 + "1" + "]" * 50,
                "[" * 3000 + "]" * 3000]


def outcome(read: Any, text: str, pos: int, final: bool) -> tuple[Any, ...]:
    """What reading does: the value (as JSON, NaN included) and end, or the error kind."""
    try:
        value, end = read(text, pos, final)
    except Incomplete:
        return ("incomplete",)
    except ValueError as error:
        return ("invalid", str(error))
    return json.dumps(value, ensure_ascii=False), end


def to_json_outcome(to_json: Any, text: str) -> tuple[Any, ...]:
    try:
        return ("json", to_json(text))
    except Incomplete:
        return ("incomplete",)
    except ValueError as error:
        return ("invalid", str(error))


def edited(samples: list[str], seed: int) -> list[str]:
    """The samples, cut, with characters deleted and inserted, and inside one another."""
    pick = random.Random(seed)
    found = list(samples)
    for text in samples:
        for at in range(len(text) + 1):
            found.append(text[:at])
        for _ in range(6):
            at = pick.randrange(len(text) + 1)
            found.append(text[:at] + pick.choice(",:[]{} \n<|\"x1") + text[at:])
            found.append(text[:at] + text[at + 1:])
        found.append(f"[{text},{pick.choice(samples)}]")
        found.append(f"{{k:{text},j:{pick.choice(samples)}}}")
    return found


@pytest.mark.parametrize("seed", range(3))
def test_the_loop_reads_what_the_recursive_reading_read(seed: int) -> None:
    for text in edited(SAMPLES, seed):
        for final in (True, False):
            for pos in (0, 1):
                assert outcome(GEMMA.read, text, pos, final) == outcome(
                    REFERENCE.read, text, pos, final), (text, pos, final)
        assert to_json_outcome(GEMMA.to_json, text) == to_json_outcome(
            lambda t: json.dumps(REFERENCE.read(t, 0, True)[0], ensure_ascii=False), text), text


# Values the translation to JSON must settle by itself (the mapper's common case).
TRANSLATED = [
    "[<|\"|>.cpp<|\"|>,<|\"|>.json<|\"|>]", "{a:1,a:2,b:<|\"|>x<|\"|>}", "[ 1 , 2 ,3 ]", "[]",
    "{<|\"|>quoted key<|\"|>: [1, {b: []}]}", "{k:1.5e3}", " \n [1,\t2]", "[NaN,-0]",
    "[{email:<|\"|>ada@example.org<|\"|>,name:<|\"|>Ada<|\"|>},{email:<|\"|>d@e.org<|\"|>}]",
    "<|\"|>text, with: [brackets]{}<|\"|>", '[<|"|>back\\slash "q"\n\t\x01<|"|>]',
    "{ключ:<|\"|>значение<|\"|>,a.b-c:1,1:2,true:null}", "{\n k \n:\n <|\"|>v<|\"|> \n}",
]


@pytest.mark.parametrize("seed", range(3))
def test_the_translation_to_json_reads_what_read_reads(seed: int) -> None:
    # Wherever the translation answers, it is the JSON of the value read reads from the
    # whole text (to the end: trailing text is read's to ignore, not the translation's).
    answered = 0
    for text in edited(SAMPLES, seed) + LONG_SAMPLES:
        translated = GEMMA.translated(text)
        if translated is None:
            continue
        answered += 1
        expected = outcome(REFERENCE.read, text, 0, True)
        assert expected == (translated, len(text)), text
    assert answered > len(SAMPLES)
    for text in TRANSLATED:
        assert GEMMA.translated(text) == outcome(REFERENCE.read, text, 0, True)[0], text


@pytest.mark.parametrize("seed", range(3))
def test_a_whole_parse_ends_a_value_where_a_traced_one_does(seed: int) -> None:
    value = DialectValue(GEMMA)
    for text in edited(SAMPLES, seed):
        for tail in ("", ",x:1}", "}<tool_call|>"):
            whole = text + tail
            fast = value.match(MatchState(whole, partial=False, traced=False), 0)
            general = value.match(MatchState(whole, partial=False, traced=True), 0)
            assert fast == general, whole
            expected = outcome(REFERENCE.read, whole, 0, True)
            assert fast == (expected[1] if len(expected) == 2 and expected[0] != "invalid"
                            else FAIL), whole


GEMMA_TEMPLATE = CORPUS / "google-gemma-4-31B-it.jinja"
LONG = "line one, {braces} and [brackets]: <b>tags</b>\n" * 8
VALUES = (
    f'<|"|>{LONG}<|"|>', f' \n <|"|>{LONG}<|"|>', f'<|"|>{LONG}', f'<|"|>{LONG}<|"|> x',
    f'<|"|>{LONG}<|"|>{LONG}<|"|>', f'[<|"|>{LONG}<|"|>, 1 x', f'[<|"|>{LONG}<|"|>, 2]',
    f'{{k:<|"|>{LONG}<|"|>}}', f'<|"{LONG}', f'<|"|>{LONG}<tool_call|>', "",
)


@pytest.mark.skipif(not GEMMA_TEMPLATE.is_file(), reason="the shared corpus is not there")
def test_a_stream_held_on_a_quoted_string_skips_as_it_would_run() -> None:
    # The value's choice (a quoted string, or any dialect value) holds while the string is
    # open; the dialect value cannot fail on more of a string (may_fail at the quote), so the
    # stream skips those chunks: the deltas and deviations of a stream that runs every chunk.
    found = generated_call(GEMMA_TEMPLATE)
    assert found is not None
    parser, rendering = found
    skipped: dict[tuple[str, int], int] = {}
    for value in VALUES:
        output = rendering.replace('<|"|>Paris<|"|>', value, 1)
        for size in (1, 2, 3, 5, 16):
            chunks = [output[at : at + size] for at in range(0, len(output), size)]
            fast, slow = CountsSkips(parser.parser), AlwaysRuns(parser.parser)
            deltas = streamed(fast, parser.prompt.tail, chunks)
            assert deltas == streamed(slow, parser.prompt.tail, chunks), (size, output)
            assert fast.deviations == slow.deviations, (size, output)
            skipped[value, size] = fast.skipped
    # Byte by byte, the string's characters are skipped, not only the markup's (46 skips of
    # 459 chunks when the dialect value may fail at its quote).
    assert skipped[VALUES[0], 1] > len(LONG)
