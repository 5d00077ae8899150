"""JSON_NATIVE calls: each call one JSON object holding the name and the arguments.

    {"name": "f", "arguments": {...}}              flat keys (any order, extra keys allowed)
    {"function": {"name": "f", "arguments": ...}}   nested under a function key
    {"f": {...}}                                     the name as the key

Calls may sit in a `[...]` array, between section markers, or each between per-call markers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from analyzer import peg as p
from analyzer.generator.arguments import ByFirstCharacter, arguments_value, checked_end
from analyzer.generator.build import (
    SPACES,
    Build,
    Lead,
    LeadPattern,
    StandsFor,
    closing,
    lead_run,
    lit,
    read_at_once,
)
from analyzer.generator.calls import CallGrammar, separator
from analyzer.peg.captures import Capture, StringCapture
from analyzer.peg.expressions import SEQUENCE_LEVEL, Choice, Commit, Repeat
from analyzer.peg.expressions import Sequence as Items
from analyzer.peg.json_values import STRING
from analyzer.peg.roles import Role
from analyzer.peg.scanning import SPACE_CHARS
from analyzer.peg.state import FAIL, UNTRACED, MatchState


@dataclass(frozen=True)
class Member:
    """A call object's name member (or the member nesting it), and its opening part."""

    key: str
    whole: p.Expr
    head: p.Expr


Item = tuple[str, p.Expr]  # a member's key and the grammar of its value
# One member's key up to its value (nothing escaped in the key).
MEMBER_KEY = '"(?P<key>[^"\\\\]*)"' + SPACES + ":" + SPACES
# The opening and the first member's key; after a member, the comma and the next key, or the
# closing brace (the group `key`: None at the brace, or where no plain key follows; it is the
# last group only after a key). A value read by one regex is read with what follows it.
FIRST_KEY = re.compile("\\{" + SPACES + "(?:" + MEMBER_KEY + ")?")
AFTER_VALUE = SPACES + "(?:," + SPACES + MEMBER_KEY + "|\\})"
NEXT_KEY = re.compile(AFTER_VALUE)
STRING_THEN_KEY = re.compile(f"(?>({STRING.pattern})){AFTER_VALUE}")
# What follows a call in a `[...]` array: the comma and the whitespace after it, or `]`.
AFTER_CALL = re.compile(SPACES + "(?:," + SPACES + "|(\\]))")
# Where arguments written last may end: a `}` the call object's own `}` follows (group 1:
# up to the object's end, as NEXT_KEY reads it there), the last such in a run of `}` (where
# nested objects end with the arguments, the object's own is the run's last `}`).
ENDS = re.compile(f"\\}}(?=({SPACES}\\}})(?!{SPACES}\\}}))")
# How far a whole parse looks for those ends, and how many it checks, before the json scanner
# reads the arguments (longer ones, nested ones ending together, `}}` in strings): a search
# that finds nothing, where the object goes on after its arguments, stays bounded.
ENDS_WINDOW, ENDS_TRIES = 1 << 13, 3
# Models swap these two names of the arguments member.
SWAPPED_KEYS = {"arguments": "parameters", "parameters": "arguments"}


class OtherKey(p.Expr):
    """Match a quoted object key that is none of the reserved ones."""

    __slots__ = ("reserved", "quotes", "expected")

    def __init__(self, reserved: list[str], python: bool) -> None:
        self.reserved = frozenset(reserved)
        self.quotes = "\"'" if python else '"'
        # Built once: every call object fails here at its reserved keys.
        self.expected = "a key other than " + ", ".join(sorted(self.reserved))

    def match(self, st: MatchState, pos: int) -> int:
        if pos >= st.n:
            return st.need(self, pos, pos) if st.partial else st.fail(pos, "a key")
        quote = st.text[pos]
        if quote not in self.quotes:
            return st.fail(pos, "a key")
        end = closing_quote(st.text, pos + 1, quote)
        if end < 0:
            return st.need(self, pos, pos) if st.partial else st.fail(pos, "a closed key")
        if st.text[pos + 1 : end] in self.reserved:
            return FAIL if pos < st.fail_pos else st.fail(pos, self.expected)
        return end + 1

    def describe(self) -> str:
        return "key-not(" + ", ".join(sorted(self.reserved)) + ")"


def closing_quote(text: str, pos: int, quote: str) -> int:
    """Return the index of the quote closing a string whose text starts at pos (-1: none)."""
    while True:
        end = text.find(quote, pos)
        if end < 0:
            return -1
        backslashes = len(text[pos:end]) - len(text[pos:end].rstrip("\\"))
        if backslashes % 2 == 0:
            return end
        pos = end + 1


class EndsBefore(StandsFor):
    """A repetition (of object members, of arguments) that is over, without trying an item,
    where the text (after whitespace, with skip_space) begins with one of stops: no item can
    begin there. A whole parse that records no failures (a failing item records what it
    expected) runs the items itself, asking before each; streams and traces run the
    repetition."""

    __slots__ = ("repeat", "stops", "skip_space", "item")

    def __init__(self, repeat: p.Expr, stops: tuple[str, ...], skip_space: bool) -> None:
        self.repeat = repeat
        self.stops = stops
        self.skip_space = skip_space
        # The item of `item*` (looped here); None for another repetition (asked once).
        plain = isinstance(repeat, Repeat) and repeat.least == 0 and repeat.most is None
        self.item = repeat.item if isinstance(repeat, Repeat) and plain else None

    def match(self, st: MatchState, pos: int) -> int:
        if st.partial or st.fail_pos != UNTRACED:
            return self.general(st, pos)
        text, n, item = st.text, st.n, self.item
        while True:  # Repeat.match's whole-parse loop, with the stops asked before each item
            at = pos
            if self.skip_space:
                while at < n and text[at] in SPACE_CHARS:
                    at += 1
            if text.startswith(self.stops, at):
                return pos
            if item is None:
                return self.general(st, pos)
            events, commits = len(st.events), st.commits
            end = item.match(st, pos)
            if end < 0:
                del st.events[events:]
                return FAIL if st.commits != commits else pos
            if end == pos:  # an item matching empty would loop forever
                return pos
            pos = end

    @property
    def general_form(self) -> p.Expr:
        return self.repeat

    def whole_pattern(self) -> Lead | None:
        # Where a stop follows, the repetition is over at once (a lookahead, no groups).
        stops = "|".join(re.escape(stop) for stop in self.stops)
        return f"(?={SPACES if self.skip_space else ''}(?:{stops}))", ()


def diverge(one: str, other: str) -> bool:
    """Tell whether neither text begins the other (no text begins with both)."""
    return not one.startswith(other) and not other.startswith(one)


def members_before_name(one: p.Expr, comma: p.Expr, name_key: str, keys: list[str],
                        python: bool) -> p.Expr:
    """Match the members before the name member; over at once at the name's key (the usual
    first member), when no member can begin with that key's text: the other-key member
    refuses it as reserved, and no known key's literal shares its text."""
    repeat = p.zero_or_more(one + comma)
    stop = json.dumps(name_key, ensure_ascii=False)
    known = [json.dumps(key, ensure_ascii=False) for key in keys]
    known += [f"'{key}'" for key in keys] if python else []
    if stop != f'"{name_key}"' or not all(diverge(stop, literal) for literal in known):
        return repeat  # an escaped key is not compared as written: no shortcut
    return EndsBefore(repeat, (stop,), skip_space=False)


def other_member(reserved: list[str], python: bool) -> p.Expr:
    """Match a member whose key is none of the reserved ones; its value is skipped, never in
    silence: an object value, where the arguments may have gone, is noted as dropped
    arguments, any other (`"type": "function"`, an id the template does not write) as a
    dropped member. The note goes where the member starts; a whole parse's MemberLoop runs
    this same expression for such a key, so both paths note it alike."""
    key = OtherKey(reserved, python) + p.space() + p.literal(":") + p.space()
    lost = p.noted(key + p.peek(p.literal("{")), "arguments_key", "dropped",
                   "the arguments under a known key")
    known = ", ".join(json.dumps(k, ensure_ascii=False) for k in reserved)
    unknown = p.noted(key, "unknown_member", "dropped", f"a member the template writes ({known})")
    return p.choice(lost, unknown) + p.json_value(python)


def members(name: Member, items: list[Item], python: bool, order: Sequence[str] = ()
            ) -> Member:
    """Match a JSON object holding the name member and any of items, in any order.

    Once a known key is read the object is settled (commit), so a stream may send its
    value as it comes. The head runs from `{` to the end of the name member's head.
    order: the keys as the template writes them (a hint for a whole parse's shortcuts)."""
    known = [p.json_key(key, python) + p.commit() + value for key, value in items]
    other = other_member([name.key, *(k for k, _ in items)], python)
    one = p.choice(*known, other)
    comma = p.space() + p.literal(",") + p.space()
    keys = [k for k, _ in items]
    before = p.literal("{") + p.space() + members_before_name(one, comma, name.key, keys, python)
    # The members after the name are over where the object closes (the comma cannot match).
    after = EndsBefore(p.zero_or_more(comma + one), ("}",), skip_space=True)
    whole = before + name.whole + after + p.space() + p.literal("}")
    if not python and all(plain_key(key) for key in (name.key, *keys)):
        whole = MemberLoop(whole, name, dict(items), other, order)
    return Member(name.key, whole, before + name.head)


def plain_key(key: str) -> bool:
    """Tell whether a key is written as it is between double quotes (nothing escaped)."""
    return json.dumps(key, ensure_ascii=False) == f'"{key}"'


class MemberLoop(StandsFor):
    """A call object (`{` members with the name member among them `}`) read, in a whole parse
    that records no failures, by one loop: the opening and first key by one regex, each value
    by the member's own value expression (the name member's regex, a known key's value after
    its commit, or the other-key member from its key), the comma and the next key, or the
    closing brace, by another (by the same one after a value a regex reads). It stands
    for the object's general sequence, which matches the same members in the same order
    (the loop before the name ends at the name's key, the loop after it at `}`); any key it
    does not settle (escaped, the name twice or missing, a value that fails, a stray
    character) runs that sequence from the start instead. Streams and traces run it always.

    Where the template writes its members in a known order, the members before the
    arguments are read by one regex in that order (`head`: the opening, the name and the
    string-valued ids, then the next key); and where the arguments come last, their object
    is taken up to a closing brace the object's own follows (ENDS), where one strict check
    (msgspec) accepts that text as one object: what the json scanner would read, without
    building it. Anything else goes the member by member way above."""

    __slots__ = ("sequence", "name_key", "name", "name_commits", "name_read",
                 "values", "strings", "other", "head", "head_events", "head_commits",
                 "last", "last_event")

    def __init__(self, sequence: p.Expr, name: Member, values: dict[str, p.Expr],
                 other: p.Expr, order: Sequence[str] = ()) -> None:
        self.sequence = sequence
        self.name_key = name.key
        self.name, self.name_commits = without_last_commits(name.whole)
        # The name member's one regex (NameMember), matched here from the name's key as
        # it matches it (it begins with that key: nowhere else can it match); None: the
        # general sequence reads the name member.
        read = self.name if isinstance(self.name, NameMember) else None
        by_key = read is not None and read.prefix()[0].startswith(f'"{name.key}"')
        self.name_read = ((re.compile(f"(?>{read.pattern.pattern}){AFTER_VALUE}"), read.capture)
                          if read is not None and by_key and read.pattern.groups == 1 else None)
        self.values = values
        # Values whose first reading is one JSON string capture (a call id): where a string
        # is there, matched and recorded here as that capture would, the rest not tried.
        self.strings = {key: first for key, value in values.items()
                        if (first := first_string(value)) is not None}
        self.other = other
        self.head, self.head_events, self.head_commits = self.ordered_head(order)
        # The arguments' key where the template writes them last, as one strict JSON object
        # (ByFirstCharacter's decoded capture): their end found by ENDS, then checked.
        last = values.get(order[-1]) if order else None
        self.last_event = last.decoded_event if isinstance(last, ByFirstCharacter) else None
        self.last = order[-1] if self.last_event is not None else None

    def ordered_head(self, order: Sequence[str]) -> tuple[
            re.Pattern[str] | None, tuple[tuple[int, Role, int, Any], ...], int]:
        """The regex of the members the template writes first, in its order, up to the first
        it cannot read so (the name member by its regex, a string-valued id), with the key
        after them; the event (group, role, flags, info) of each, and their commits."""
        parts: list[str] = []
        events: list[tuple[int, Role, int, Any]] = []
        commits, groups = 0, 0
        for key in order:
            if key == self.name_key and self.name_read is not None:
                read = self.name
                assert isinstance(read, NameMember)
                parts.append(read.pattern.pattern)
                capture, commits = read.capture, commits + self.name_commits
            elif key in self.strings and key != self.name_key:
                parts.append(f'"{key}"{SPACES}:{SPACES}(?>({STRING.pattern}))')
                capture, commits = self.strings[key], commits + 1
            else:
                break
            groups += 1
            events.append((groups, capture.role, capture.flags, capture.info))
        if not events or not any(key == self.name_key for key in order[:len(events)]):
            return None, (), 0
        pattern = "\\{" + SPACES + f"{SPACES},{SPACES}".join(parts) + AFTER_VALUE
        return re.compile(pattern), tuple(events), commits

    def match(self, st: MatchState, pos: int) -> int:
        if st.partial or st.fail_pos != UNTRACED:
            return self.sequence.match(st, pos)
        events, commits = len(st.events), st.commits
        text, values, name_read, strings = st.text, self.values, self.name_read, self.strings
        head = self.head
        member = head.match(text, pos) if head is not None else None
        if member is not None:  # the members the template writes first, in its order
            for group, role, flags, info in self.head_events:
                start, end = member.span(group)
                st.events.append((role, start, end, flags, info))
            st.commits += self.head_commits
            named = True
        else:
            member = FIRST_KEY.match(text, pos)
            named = False
        # Each member from its key: its value, then `,` and the next key, or `}` (a value
        # read by a regex is read with what follows it, by one).
        while member is not None and (key := member.group("key")) is not None:
            if key == self.name_key:
                # The name member, read by its own regex from its key (the name twice, or a
                # name its regex refuses: the general sequence decides).
                if named or name_read is None:
                    break
                pattern, capture = name_read
                member = pattern.match(text, member.start("key") - 1)
                if member is None:
                    break
                named = True
                start, end = member.span(1)
                st.events.append((capture.role, start, end, capture.flags, capture.info))
                st.commits += self.name_commits
            elif key in values:
                st.commits += 1  # the known member's commit, after its key
                at = member.end()
                if key == self.last and named and text[at:at + 1] == "{":
                    end = self.arguments_last(st, at)
                    if end >= 0:
                        return end
                string = strings.get(key)
                if string is not None and (found := STRING_THEN_KEY.match(text, at)) is not None:
                    # StringCapture.match's step, in the choice's place: two frames less
                    st.events.append((string.role, at, found.end(1), string.flags, string.info))
                    member = found
                else:
                    end = values[key].match(st, at)
                    member = NEXT_KEY.match(text, end) if end >= 0 else None
            else:
                end = self.other.match(st, member.start("key") - 1)
                member = NEXT_KEY.match(text, end) if end >= 0 else None
            if member is not None and member.lastgroup is None and named:  # the brace
                return member.end()
        del st.events[events:]  # the general sequence decides, from the start
        st.commits = commits
        return self.sequence.match(st, pos)

    def arguments_last(self, st: MatchState, at: int) -> int:
        """Take the arguments object at `at`, written last, up to a `}` the call object's own
        `}` follows, where the strict check takes that text as one object (else the next
        such `}`, ENDS_TRIES in all within ENDS_WINDOW); return the end of the call object,
        its brace read as NEXT_KEY reads it (-1: not found so, the loop reads the value)."""
        event = self.last_event
        if event is None:  # never so where self.last matched: set together
            return -1
        text = st.text
        limit, tries = at + ENDS_WINDOW, ENDS_TRIES
        closed = ENDS.search(text, at, limit)
        while closed is not None:
            end = checked_end(text[at : closed.end()], at)
            if end >= 0:
                role, flags, info = event
                st.events.append((role, at, end, flags, info))
                return closed.end(1)
            tries -= 1
            closed = ENDS.search(text, closed.end(), limit) if tries else None
        return -1

    @property
    def general_form(self) -> p.Expr:
        return self.sequence

    def first_leaf(self) -> p.Expr | None:
        return self.sequence.first_leaf()


def first_string(value: p.Expr) -> StringCapture | None:
    """The JSON string capture a value's reading begins with, alone or as the first
    alternative of a choice (where it matches, the value is that string), else None."""
    first = value.alternatives[0] if isinstance(value, Choice) else value
    return first if type(first) is StringCapture else None


def without_last_commits(expr: p.Expr) -> tuple[p.Expr, int]:
    """Split a sequence ending in commits into the rest and how many commits end it."""
    items = expr.items if isinstance(expr, Items) else (expr,)
    size = len(items)
    while size > 1 and type(items[size - 1]) is Commit:
        size -= 1
    rest = items[0] if size == 1 else Items(items[:size])
    return rest, len(items) - size


class NameMember(StandsFor):
    """The name member (`"name": "f"`), read in whole parses that record no failures by one
    regular expression made from its literals, whitespace and the captured choice of names
    (atomic groups and possessive repeats: PEG's way of never going back); streams and traces
    run its sequence."""

    __slots__ = ("sequence", "pattern", "capture", "group")

    def __init__(self, sequence: p.Expr, pattern: str, capture: Capture, group: str) -> None:
        self.sequence = sequence
        self.pattern = re.compile(pattern)
        self.capture = capture
        self.group = group  # the name of the regex's one group, the capture's

    def match(self, st: MatchState, pos: int) -> int:
        if not st.partial and st.fail_pos == UNTRACED:
            found = self.pattern.match(st.text, pos)
            if found is None:
                return FAIL
            capture = self.capture
            start, end = found.span(1)
            st.events.append((capture.role, start, end, capture.flags, capture.info))
            return found.end()
        return self.general(st, pos)

    @property
    def general_form(self) -> p.Expr:
        return self.sequence

    def first_leaf(self) -> p.Expr | None:
        return self.sequence.first_leaf()

    def whole_pattern(self) -> Lead | None:
        capture = self.capture
        return self.pattern.pattern, ((self.group, capture.role, capture.flags, capture.info),)


def name_member(sequence: p.Expr) -> p.Expr:
    """Return the name member's sequence (or the name as the key, `{"f":`) read by one
    regular expression where LeadPattern reads its items exactly (where the regex fails, the
    sequence does) with one capture among them, else the sequence itself."""
    items = sequence.items if isinstance(sequence, Items) else (sequence,)
    captures = [item for item in items if isinstance(item, Capture)]
    lead = LeadPattern()
    found = lead.of_items(items, top=False)
    if found is None or not found[1] or len(captures) != 1 or len(lead.marks) != 1:
        return sequence
    return NameMember(sequence, found[0], captures[0], lead.marks[0][0])


def quoted_name(names: list[str], python: bool) -> p.Expr:
    """Match a function name in quotes."""
    name = p.tool_name(p.literals(names))
    double = p.literal('"') + name + p.literal('"')
    return p.choice(double, p.literal("'") + name + p.literal("'")) if python else double


def call_id_value() -> p.Expr:
    """Match a call id: a JSON string, or any JSON value taken as written."""
    return p.choice(p.call_id(p.json_string()), p.call_id(p.json_value()))


def field_members(b: Build, names: list[str]) -> tuple[Member, list[Item]]:
    """Match the name member, and the arguments and id members, of a flat call object."""
    fmt = b.analysis.tools.format
    python = fmt.uses_python_dicts
    name_key, args_key = fmt.name_field.split(".")[-1], fmt.args_field.split(".")[-1]
    name = name_member(p.json_key(name_key, python) + quoted_name(names, python))
    args = arguments_value(python)
    items: list[Item] = [(args_key, args)]
    other = SWAPPED_KEYS.get(args_key)
    if other:  # the other usual name of the arguments member: read, and noted
        items.append((other, p.noted(args, "arguments_key", "accepted", f'`"{args_key}"`')))
    items += [(key, call_id_value()) for key in (fmt.id_field, fmt.gen_id_field) if key]
    return Member(name_key, name + p.commit(), name), items


def call_object(b: Build, names: list[str], ordered: bool = False) -> Member:
    """Match one call object (and its head, up to the function name). ordered: the call is
    the template's own (a whole parse of a flat object reads its members in the template's
    order first)."""
    fmt = b.analysis.tools.format
    python = fmt.uses_python_dicts
    if fmt.fun_name_is_key:
        key = p.literal("{") + p.space() + quoted_name(names, python) + p.space()
        key = name_member(key + p.literal(":"))
        args = p.space() + arguments_value(python) + p.space() + p.literal("}")
        return Member("", key + p.commit() + args, key)
    name, items = field_members(b, names)
    nesting = fmt.function_field or (fmt.name_field.split(".")[0] if "." in fmt.name_field
                                     else "")
    if nesting:
        inner = members(name, items, python)
        key = p.json_key(nesting, python)
        name = Member(nesting, key + inner.whole, key + inner.head)
    elif ordered:
        return members(name, items, python, fmt.parameter_order)
    return members(name, items, python)


class SeparatorBeforeCall(StandsFor):
    """A noted separator the template does not write between calls, read when a call's head
    follows it. Between two calls there is usually none: a whole parse that records no
    failures reads the separator's pattern and the head's literal beginning here, and runs
    the noted sequence only where both are found (streams and traces always run it)."""

    __slots__ = ("noted", "pattern", "lead")

    def __init__(self, pattern: str, head: p.Expr) -> None:
        found = p.regex(pattern) + p.peek(head)
        self.noted = p.noted(found, "call_separator", "accepted",
                             "what the template writes between calls")
        self.pattern = re.compile(pattern)
        self.lead = head.prefix()[0]

    def match(self, st: MatchState, pos: int) -> int:
        if not st.partial and st.fail_pos == UNTRACED:
            found = self.pattern.match(st.text, pos)
            if found is None or not st.text.startswith(self.lead, found.end()):
                return FAIL  # the regex, or the lookahead's literal check, fails
        return self.general(st, pos)

    @property
    def general_form(self) -> p.Expr:
        return self.noted


def side_by_side(pattern: str, obj: Member) -> p.Expr:
    """Match a separator the template does not write between calls, when a call follows it
    (noted: the calls are read)."""
    return SeparatorBeforeCall(pattern, obj.head)


class CallArray(StandsFor):
    """The calls of a JSON array (`marker [ call, call ]` and its closing marker), read in a
    whole parse that records no failures by one loop: the opening by one regex, each call
    object by its own expression with the call's open and close events recorded around it
    (as its rule and tool capture would), the comma or `]` after it by another regex, then
    the closing. It stands for the section's sequence, which reads the same calls the same
    way; where a call or what follows it fails, that sequence runs from the start instead.
    Streams and traces run it always."""

    __slots__ = ("sequence", "opening", "call", "rest")
    level = SEQUENCE_LEVEL  # read in dumps as the items of its sequence

    def __init__(self, sequence: p.Expr, marker: str, call: p.Expr, rest: p.Expr) -> None:
        self.sequence = sequence
        self.opening = re.compile(re.escape(marker) + SPACES + "\\[" + SPACES)
        self.call = call  # the call object, without its rule and tool capture
        self.rest = rest  # the closing marker (or its noted absence)

    def match(self, st: MatchState, pos: int) -> int:
        if st.partial or st.fail_pos != UNTRACED:
            return self.general(st, pos)
        text, events, call = st.text, st.events, self.call
        found = self.opening.match(text, pos)
        before, commits = len(events), st.commits
        while found is not None:
            at = found.end()
            events.append((Role.TOOL_OPEN, at, at, 0, None))
            end = call.match(st, at)
            if end < 0:
                break
            events.append((Role.TOOL_CLOSE, end, end, 0, None))
            found = AFTER_CALL.match(text, end)
            if found is not None and found.lastindex:  # the array's `]` (group 1)
                return self.rest.match(st, found.end())
        del events[before:]  # the general sequence decides, from the start
        st.commits = commits
        return self.general(st, pos)

    @property
    def general_form(self) -> p.Expr:
        return self.sequence

    def first_leaf(self) -> p.Expr | None:
        return self.sequence.first_leaf()


def json_calls(b: Build, tools: Sequence[Mapping[str, Any]]) -> CallGrammar:
    """Build the tool-call grammar for a JSON_NATIVE template."""
    fmt = b.analysis.tools.format
    names = p.tool_names(tools)
    obj = call_object(b, names, ordered=True)
    call = p.rule("tool-call", p.tool(obj.whole))
    per_call_start = fmt.per_call_start.strip()
    unit = lit(per_call_start) + p.space() + call
    if per_call_start:  # more calls inside one per-call wrapper, `;` or newline apart
        unit += p.zero_or_more(side_by_side(r"[ \t]*;\s*|[ \t]*\n\s*", obj) + call)
    unit += closing(fmt.per_call_end)
    if fmt.tools_array_wrapped:
        comma = p.space() + p.literal(",") + p.space()
        body = p.literal("[") + p.space() + unit + p.zero_or_more(lead_run(comma + unit))
        body += p.space()
        body += p.literal("]")
        head = p.literal("[") + p.space() + lit(per_call_start) + p.space() + obj.head
    else:
        between = separator(fmt.call_separator)
        if fmt.call_separator.strip() != ";":
            between = p.choice(side_by_side(r"\s*;\s*", obj), between)
        body = unit + p.zero_or_more(between + unit)
        head = lit(per_call_start) + p.space() + obj.head
    section_start, ending = fmt.section_start.strip(), closing(fmt.section_end)
    section = lit(section_start) + p.space() + body + ending
    if fmt.tools_array_wrapped and not per_call_start and not fmt.per_call_end.strip():
        section = CallArray(section, section_start, obj.whole, ending)
    head = lit(section_start) + p.space() + head
    first = section_start or per_call_start or ("[" if fmt.tools_array_wrapped else "{")
    return CallGrammar((first,), read_at_once(head), section)
