"""Stream parsing: feed chunks of model output, get OpenAI-style deltas.

The parser keeps only what is not final yet. After each chunk it records the resume point the
engine reports (an expression and a position past everything certain), drops the text before
it and maps the final captures to deltas; the next chunk re-runs from there, not from the
start, so streaming costs time linear in the output length.

A run can also be skipped. The leaf whose input ran out last says where it would run out
again on the longer text (`Expr.waiting_end`: a literal not complete yet waits where it did,
a scan up to markers reads on while no marker can begin). When it would wait where it did,
with every event of the last run final, nothing changes; when the run resumed from the very
expression it was given, in that leaf, with at most one capture up to where it waits, the
capture stretches to the new end. The stream then produces that outcome without running the
grammar; the events, and so the deltas, are the ones the run would have given.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from json.encoder import encode_basestring
from typing import Any

from analyzer.parsing.deltas import Delta, ToolCallDelta, new_tuple
from analyzer.parsing.deviations import Deviation, collected
from analyzer.parsing.mapper import HANDLERS, MessageBuilder
from analyzer.parsing.message import Message, ToolCall
from analyzer.parsing.recovery import Break, broken_at, rest_as_content
from analyzer.peg import Expr, ParseProblem, Parser, Role
from analyzer.peg.captures import Capture, ToolCapture
from analyzer.peg.diagnostics import ProblemWatch
from analyzer.peg.expressions import RESUME_DEPENDENTS, RESUME_EPOCH, Scope, Sequence
from analyzer.peg.json_values import ValueAhead
from analyzer.peg.parser import failure
from analyzer.peg.roles import CONTINUED, PARTIAL
from analyzer.peg.scanning import SPACE_CHARS
from analyzer.peg.state import FAIL, NEED, Event, MatchState

__all__ = ["Accumulator", "Delta", "StreamParser", "ToolCallDelta", "accumulate", "stream_parse"]

# Tentative events a stream may leave tentative while a leaf waits: the message does not
# show them (a call's start shows with its name), so whether a run made them final before
# the next one does changes no delta.
SILENT = frozenset({Role.TOOL_OPEN})

# Dropped pieces of text a run's drop leaves uncounted (skipped runs only add theirs, as
# before lines were counted lazily: the text of one value at most).
GONE_PIECES = 64

# How many of _steady's answers at a resume point's head a stream keeps (a stream meets a few
# dozen resume points).
HEADS_KEPT = 256

# The roles of the events the problem watch takes.
NOTED = frozenset({Role.PROBLEM, Role.DEVIATION})

# A quiet stream's capture when the run that left it did not show it (it captured nothing).
UNKNOWN: Any = object()
# A quiet stream's capture when the run was held back (a choice still open before the leaf):
# its events stay tentative and the resume point stays where it is while the leaf reads on.
HELD: Any = object()


# A stream whose next chunks may need no run (`StreamParser.quiet`): (leaf, at, capture, sink,
# head, moves, clear): the leaf that waits, where it waits (in the buffer), the capture it
# stretches (None: none, UNKNOWN: not seen, HELD: held back), how that capture's text maps to
# deltas (a mapper.TextSink; None: not found yet, at the first stretch; NO_SINK: through the
# mapper's handler),
# the leaf the stream's resume point still holds when a leaf that moves has read on in a new
# state (None: the same leaf), the leaf's `Expr.moves` (a class attribute: its read through
# the instance is not specialized on 3.11, and every skipped chunk asks), and, once a text
# sink is known, the leaf's `Expr.reads_on_without`, or while it is held its one `Expr.wake`
# character ("": not known, or none): a chunk without that character is stretched (or waits
# on) without asking the leaf (a call costs ~2,400 machine instructions, the test and the
# strip a few hundred).
# A plain tuple, not a named one: every skipped chunk unpacks it and most runs build one, and
# a named tuple's unpack (not specialized) and constructor cost several times a plain tuple's
# (46 / 136 ns against 17 / 35 ns on 3.11).
Quiet = tuple[Expr, int, Any, Any, Any, bool, str]


NO_SINK: Any = object()

# Runs a resume point's regex decides (generator/regexrun.py: it reads the generator's
# shortcuts, and parsing sits under the generator, so it gives its builder here): by resume
# point, its shapes (NO_SHAPES: none). A few dozen points per grammar; the table starts over
# when full, and with the resume-point tables (a learned outcome holds their objects).
POINTS: dict[Any, Any] = {}
RESUME_DEPENDENTS.append(POINTS)
POINTS_KEPT = 1024
NO_SHAPES: Any = False
# After this many runs in a row from points without shapes a stream stops asking (a point
# holding a JSON scan's state is a new object at every run: each asks the builders anew).
SHAPELESS = 64
UNSEEN: Any = object()  # a decided outcome's answer on the next chunks, not known yet
UNREAD: Any = object()  # a text the point's shapes have not read yet (regexrun.Shapes.take)
SHAPE_BUILDERS: list[Callable[[Expr], Any]] = []
# Whether a grammar has any point a regex may decide (regexrun gives the check): a stream of
# a grammar without one (a JSON call's) never asks, as asking costs its runs a few percent.
GRAMMAR_CHECKS: list[Callable[[Expr], bool]] = []
DECIDING: dict[Expr, bool] = {}  # the checks' answers, by grammar (its start)


def grammar_decides(start: Expr) -> bool:
    """Tell whether a stream of this grammar may have runs a regex decides (asked once)."""
    found = DECIDING.get(start)
    if found is None:
        if len(DECIDING) >= POINTS_KEPT:
            DECIDING.clear()
        found = DECIDING[start] = any(check(start) for check in GRAMMAR_CHECKS)
    return found


# A point's shapes are built once streams of the process have run from it this many times:
# building them (a few regexes) pays only over many runs, and a short stream, or a grammar met
# once (a test's, a pasted template's), would pay it for nothing. A fresh process's first 25k
# qwen3-coder stream at 16 bytes: 20 ms with the tree alone, 49 ms building every point at its
# first run, 28 ms after 8; later streams' instructions +1-2% against building at once.
BUILD_AFTER = 8
NOT_YET: Any = object()  # a point not met often enough yet: the tree runs
MET: dict[Any, int] = {}  # runs from points not built yet, by point
RESUME_DEPENDENTS.append(MET)


def met_often(point: Expr) -> bool:
    """Count a run from a point without shapes yet; tell whether to build them now."""
    met = MET.get(point, 0) + 1
    if met >= BUILD_AFTER:
        return True
    if len(MET) >= POINTS_KEPT:
        MET.clear()
    MET[point] = met
    return False


def shapes_of(point: Expr) -> Any:
    """Return the point's shapes (NO_SHAPES: none), built once. A point without any is not
    kept: a JSON scan's point is a new object at every run, and the table would keep them
    (and what they hold) alive; the builders tell at once (regexrun._begins)."""
    shapes = POINTS.get(point)
    if shapes is None:
        for build in SHAPE_BUILDERS:
            shapes = build(point)
            if shapes is not None:
                if len(POINTS) >= POINTS_KEPT:
                    POINTS.clear()
                POINTS[point] = shapes
                return shapes
        return NO_SHAPES
    return shapes

# What a leaf can tell a stream (leaf_kind): computed once per leaf, as a run's last leaf is
# asked at every run (an isinstance, class attributes read through the instance, and the
# type's waiting_end: several hundred machine instructions on 3.11).
MUTE, WAITS, MOVES = 0, 1, 2


class StreamParser:
    """Parse a model output chunk by chunk."""

    # Whether runs a resume point's regex decides skip the tree (regexrun; off: every run
    # walks the tree, as the differential tests compare).
    decided = True

    def __init__(self, parser: Parser, output_start: int = 0) -> None:
        self.start: Expr = parser.start
        # Where the model's output begins in what is fed: the generation prompt's tail comes
        # first, and a break never keeps that as content.
        self.output_start = output_start
        self.expr: Expr = parser.start
        self.raw = False  # the grammar could not even start: the rest is content
        self.broke = -1  # where the last break was (offset in the whole output)
        self.restarted = 0  # where the grammar last started reading a new output
        self.buffer = ""
        self.offset = 0  # where buffer[0] is in the whole output
        # Offset, line and column of the start of `gone` (the text dropped since they were
        # last counted): lines are counted only when a problem or a break needs them.
        self.origin = (0, 1, 1)
        self.builder = MessageBuilder(record=True)
        self.finished = False
        self.watch = ProblemWatch()
        self.memo: dict[Any, Any] = {}  # lookaheads left undecided, for the next chunk
        self.gone: list[str] = []  # text dropped from the buffer, not yet past the origin
        # Set while the last run was steady: the characters that would change its outcome,
        # and the capture it stretched over the whole text (None: it captured nothing).
        self.quiet: Quiet | None = None
        # While a quiet stream stretches a capture through a known text sink, at the start
        # of the text, with no memo and no problem pending: the leaf's reads_on_without
        # character, the sink's function, the call's argument pieces when the sink escapes
        # and sends value text (mapper.TextSink; else None), the call's index. Set by
        # _stretched, dropped before the next run (only feed's own run branch meets one set:
        # a quiet stream with a sink runs nowhere else) and by finish.
        self.fast: tuple[str, Any, list[str] | None, int] | None = None
        # _steady's answers built from head_capture's, by (resume point, leaf)
        self.heads: dict[tuple[Any, Expr], Quiet] = {}
        # leaf_kind's answers, for _steady (a stream meets a few dozen leaves, and a leaf that
        # moves is a new one at each read-on: at most HEADS_KEPT kept)
        self.kinds: dict[Any, int] = {}
        # The outcomes of runs decided by their resume point's regex, by text (regexrun)
        # (by point and text: a text met at several points, `\n</parameter>\n<param` after
        # each argument's value, is decided at each)
        self.texts: dict[tuple[Any, str], Any] = {}
        self.epoch = RESUME_EPOCH[0]  # of the resume-point tables its outcomes are from
        self.shapeless = 0  # runs in a row from points without shapes
        if self.decided and not grammar_decides(parser.start):
            self.decided = False
        # The state every run reuses (`MatchState.rerun`): nothing keeps it past a run.
        self.state = MatchState("", True, traced=False)

    def feed(self, chunk: str) -> list[Delta]:
        """Add a chunk; return the deltas that became certain."""
        buffer = self.buffer + chunk
        fast = self.fast
        if fast is not None and fast[0] not in buffer:
            # The middle of a long value (most chunks of a stream): the leaf reads on to the
            # end, short of trailing whitespace (`Expr.reads_on_without`), and the capture's
            # text sink maps the text; what _stretched does, in feed's one frame.
            text = buffer.rstrip(SPACE_CHARS)
            if text is buffer:  # nothing stripped (rstrip gives the string itself back)
                self.buffer = ""
            elif text:
                self.buffer = buffer[len(text):]
            else:  # only whitespace: it waits where it did
                self.buffer = buffer
                return []
            self.gone.append(text)  # _drop's work: its pieces are counted at a run's drop
            self.offset += len(text)
            _, sink, pieces, index = fast
            if pieces is None:
                delta = sink(text)
                return [] if delta is None else [delta]
            # A value's text sent as it comes: the sink's work (mapper.TextSink), inlined
            piece = encode_basestring(text)[1:-1]
            pieces.append(piece)
            return [new_tuple(Delta, (None, None, (new_tuple(ToolCallDelta,
                                                             (index, None, None, piece)),)))]
        quiet = self.quiet
        if quiet is None and self.finished:  # finish() leaves no quiet stream
            raise ValueError("feed() after finish()")
        watch = self.watch
        if watch.pending:
            watch.received(chunk)
        self.buffer = buffer
        if quiet is None:
            deltas = self._advance(True)
        elif quiet[5]:  # a leaf that moves reads on itself
            read = self._read_on(quiet, buffer)
            deltas = self._advance(True) if read is None else read
        else:
            leaf, at, capture, sink, _, _, clear = quiet
            if not clear or clear in buffer:
                end = leaf.waiting_end(buffer, at)
            # The leaf's waiting_end answer without the call, when the text lacks `clear`:
            elif capture is HELD:  # a held leaf's one wake character: it waits at the end
                end = len(buffer)
            else:  # Expr.reads_on_without: it reads to the end, short of trailing whitespace
                end = len(buffer.rstrip(SPACE_CHARS))
                if end < at:  # only whitespace after where it waited
                    end = at
            # (A sink is known only for a capture that stretches: not UNKNOWN, not HELD.)
            if end == at:
                deltas = []  # it waits where it did: nothing new is certain
            elif end < 0 or capture is UNKNOWN:  # a run's chunk (markup)
                if fast is not None:  # the run maps new events: the sink is no longer valid
                    self.fast = None
                deltas = self._advance(True)
            elif capture is HELD:  # nothing is final yet: the leaf only waits further on
                self.quiet = (leaf, end, HELD, None, None, False, clear)
                deltas = []
            else:
                deltas = self._stretched(quiet, end)
        if watch.pending:
            watch.settle(final=False)
        return deltas

    def _read_on(self, quiet: Quiet, buffer: str) -> list[Delta] | None:
        """Let a leaf that moves read on from the head of the resume point, stretching its
        capture to where it would resume, in the state it would wait in (None: run).

        A value not begun yet (a ValueAhead at the head, its capture's flags not CONTINUED)
        reads its first piece as the run records it; what follows continues the capture."""
        waiting, waited, capture, sink, head, _, _ = quiet
        if capture is UNKNOWN or capture is HELD:
            return None
        end, leaf = waiting.read_on(buffer)
        if end < 0:
            return None
        at = len(buffer) - end  # it waits at the end of the text, resumes at end
        if leaf is not waiting or at != waited:
            if leaf is not waiting:
                head = head or waiting
            self.quiet = quiet = (leaf, at, capture, sink, head, True, "")
            if not capture[3] & CONTINUED:  # the first piece of a value: the rest continues it
                deltas = self._stretched(quiet, end)
                continued = (capture[0], 0, 0, capture[3] | CONTINUED, capture[4])
                self.quiet = (leaf, at, continued, None, head, True, "")
                return deltas
        return self._stretched(quiet, end) if end else []

    def _stretched(self, quiet: Quiet, end: int) -> list[Delta]:
        """Give a skipped run's deltas: the quiet stream's capture stretched over buffer[:end],
        all of it final, and that text dropped (a held run only waits further on)."""
        leaf, at, capture, sink, head, moves, clear = quiet
        if capture is HELD:  # nothing is final yet: the leaf only waits further on
            self.quiet = (leaf, end, HELD, None, None, moves, clear)
            return []
        deltas: list[Delta] = []
        buffer = self.buffer
        text = buffer[:end]
        if capture is not None:
            if sink is None:  # the builder's text sink (MessageBuilder.text_sink), found once
                role, _, _, flags, info = capture
                # (`in NOTED`, not `is Role.PROBLEM or ...`: an enum member read costs ~150 ns)
                found = None if role in NOTED else self.builder.text_sink(role, flags, info)
                sink = NO_SINK if found is None else found
                # feed's usual chunk is this sink's: the leaf may say how it reads on
                clear = "" if moves or found is None else leaf.reads_on_without
                self.quiet = (leaf, at, capture, sink, head, moves, clear)
                if found and clear and not at and not self.memo and not self.watch.pending:
                    # Nothing but a run changes these (a run's events, its memo): till the
                    # next run, feed takes a chunk without `clear` itself.
                    function, pieces, index, escaped = found
                    self.fast = (clear, function, pieces if escaped else None, index)
            if sink is NO_SINK:
                deltas = self._stretch(capture, end)
            else:  # the mapping of one text capture, straight to its delta
                function, pieces, index, escaped = sink
                if pieces is None:
                    delta = function(text)
                    if delta is not None:
                        deltas = [delta]
                else:  # argument text sent as it comes, as in feed
                    piece = encode_basestring(text)[1:-1] if escaped else text
                    pieces.append(piece)
                    if piece:
                        deltas = [new_tuple(Delta, (None, None, (new_tuple(
                            ToolCallDelta, (index, None, None, piece)),)))]
        if self.memo:
            self._drop(end)
        else:  # _drop's work, inlined (most chunks of a long value come here); its pieces
            # are counted at the next run's drop
            self.gone.append(text)
            self.buffer = buffer[end:]
            self.offset += end
        return deltas

    def _stretch(self, capture: Event, end: int) -> list[Delta]:
        """Map the capture stretched over buffer[:end] as a run would."""
        role, _, _, flags, info = capture
        if role in NOTED:
            return self._emit([(role, 0, end, flags, info)])
        handler = HANDLERS.get(role)
        builder = self.builder
        if handler is not None:
            handler(builder, self.buffer[:end], flags, info)
        sent = builder.sent
        if not sent:
            return []
        builder.sent = []
        return sent

    def _steady(self, state: MatchState) -> Quiet | None:
        """Tell whether the run that left this state would repeat itself while its leaf
        reads new text (`Expr.waiting_end`), and how.

        With every event final (or silent), a leaf that waits where it did (a literal not
        complete yet, even inside held text) changes nothing. When the run also resumed from
        the expression it was given, in the leaf, at the start of the text, with at most one
        capture from there to where the leaf waits, the leaf reading on stretches that
        capture. A leaf that moves (a JSON scan) stretches its capture when it is at the head
        of the resume point, whatever its state.

        A run held back before its leaf (a choice still open, its events tentative) repeats
        itself while the leaf reads on when no hold on the way may change with more input
        (`MatchState.shaky`): the same resume point, nothing final (HELD)."""
        return self._steady_of(state.leaf, state.events, state.commit_events,
                               state.resume_pos, state.need_end, state.resume, state.shaky)

    def _steady_of(self, leaf: Any, events: Any, commit: int, resume_pos: int,
                   need_end: int, resume: Any, shaky: bool) -> Quiet | None:
        """_steady's answer from a run's fields (a decided run fills no state: its kept
        outcome gives them, `regexrun.Shapes.take`)."""
        kinds = self.kinds
        kind = kinds.get(leaf)
        if kind is None:
            if len(kinds) >= HEADS_KEPT:
                kinds.clear()
            kind = kinds[leaf] = leaf_kind(leaf)
        if kind == MUTE:
            return None  # a leaf that cannot tell: every chunk runs
        at = need_end - resume_pos  # where the leaf waits once the text before is dropped
        if at < 0:
            return None
        if kind == MOVES:
            tentative = events[commit:] if commit != len(events) else ()
            return moving_quiet(resume, resume_pos, leaf, tentative, at)
        size = len(self.buffer)
        capture: Any = UNKNOWN
        if commit != len(events):
            for event in events[commit:]:
                if event[0] not in SILENT:
                    return None if shaky else (leaf, at, HELD, None, None, False,
                                               wake_character(leaf))
        elif at or not size:
            pass
        elif resume is not self.expr:
            # Resume points are kept one object per structure: a stream meets the same few
            # again and again, and head_capture's answer depends on the two objects alone:
            # so does the whole answer here (the leaf waits at the start of the text), kept.
            heads = self.heads
            quiet = heads.get((resume, leaf))
            if quiet is None:
                if len(heads) >= HEADS_KEPT:
                    heads.clear()
                quiet = heads[resume, leaf] = (leaf, 0, head_capture(resume, leaf), None, None,
                                               False, "")
            return quiet
        elif not events:
            capture = None if resume_pos == size else UNKNOWN
        elif len(events) == 1 and not events[0][1] and events[0][2] == resume_pos and resume_pos:
            capture = events[0]
        return (leaf, at, capture, None, None, False, "")

    def finish(self) -> list[Delta]:
        """Declare the output complete; return the remaining deltas."""
        self.finished = True
        deltas = self._advance(partial=False)
        self.quiet = self.fast = None  # feed() tells finished only where nothing is quiet
        self.watch.settle(final=True)
        return deltas

    def _advance(self, partial: bool) -> list[Delta]:
        """Run over the buffer, recovering at each break as a one-shot parse does."""
        quiet, self.quiet = self.quiet, None
        if quiet is not None and quiet[4] is not None:  # its head: a moved leaf's old state
            self.expr = with_leaf(self.expr, quiet[4], quiet[0])
        found: Any = UNREAD  # what the point's shapes read of the text, for the loop's run
        if partial and self.decided and not self.memo and not self.raw:
            # At a point whose shapes are built (not None, not NO_SHAPES), a text decided
            # here before (most runs of a long stream) is taken as it was (kept outcomes go
            # with the epoch), and another its regex decides at once: neither needs the
            # loop's questions nor a state (those are for the tree).
            buffer, expr = self.buffer, self.expr
            shapes = POINTS.get(expr)
            if shapes and self.epoch == RESUME_EPOCH[0]:
                met = self.texts.get((expr, buffer))
                if met is None:
                    found = met = shapes.decide(expr, buffer, self.texts)
                    if type(met) is not list:
                        met = None  # the loop's run takes what decide read
                if met is not None:
                    self.shapeless = 0
                    if met[10] is UNSEEN:  # _steady's answer for this text, not known yet
                        # Where the key's answer is the same for all its texts (its leaf
                        # waits at the start of the text, or ahead: `_keep_answer`), it is
                        # the one kept for the key, without asking.
                        kept, at = met[11][9], met[6] - met[4]
                        if kept is None or kept[0] is not type(self):
                            met[10] = self._keep_answer(met, at)
                        elif kept[1] is None:
                            met[10] = (met[8], at, UNKNOWN, None, None, False, "") if at > 0 \
                                else self._keep_answer(met, at)
                        else:
                            met[10] = kept[1] if at == 0 and buffer else \
                                self._keep_answer(met, at)
                    # _met, inlined (every decided run comes here)
                    _, events, _, self.expr, pos, commit, _, _, _, _, self.quiet, _ = met
                    sent = self._emit(events if commit == len(events) else events[:commit]) \
                        if commit else []
                    if pos:  # _drop(pos), inlined (no memo: decided runs leave none)
                        gone = self.gone
                        gone.append(buffer[:pos])
                        self.buffer = buffer[pos:]
                        self.offset += pos
                        if len(gone) > GONE_PIECES:
                            self._origin()
                    return sent
        deltas: list[Delta] = []
        state = self.state
        while not self.raw:
            expr = self.expr
            shapes = NO_SHAPES
            if partial and self.decided and not self.memo:
                shapes = POINTS.get(expr)
                if shapes is None:
                    shapes = shapes_of(expr) if met_often(expr) else NOT_YET
                if shapes is NO_SHAPES:
                    self.shapeless += 1
                    if self.shapeless > SHAPELESS:
                        self.decided = False  # a JSON call's stream: asking costs, never pays
                elif shapes is NOT_YET:
                    shapes = NO_SHAPES
                else:
                    self.shapeless = 0
                    if self.epoch != RESUME_EPOCH[0]:  # the kept objects it holds are gone
                        self.texts, self.epoch = {}, RESUME_EPOCH[0]
            if shapes is NO_SHAPES:
                outcome = state.rerun(expr, self.buffer, partial, self.memo, self.offset)
            elif found is None:  # decide said the tree runs
                found = UNREAD  # after a break, another text
                outcome = state.rerun(expr, self.buffer, partial, self.memo, self.offset)
            else:  # a run its resume point's regex may decide (regexrun.Shapes)
                outcome = shapes.take(state, expr, self.buffer, self.memo, self.offset,
                                      self.texts, found)
                if type(outcome) is list:  # decided: the kept outcome, no state filled
                    if outcome[10] is UNSEEN:
                        outcome[10] = self._steady_of(outcome[8], outcome[1], outcome[5],
                                                      outcome[4], outcome[6], outcome[3],
                                                      outcome[9])
                    return deltas + self._met(outcome)
                found = UNREAD
            if outcome == FAIL:
                # A stream reads only where a run broke from its errors, not their lines:
                # those are counted (`_origin`) only for what a break reports.
                error = failure(self.expr, self.buffer, 0, partial, (self.offset, 1, 1))
                deltas += self._break(broken_at(self.expr, self.buffer, error, self._origin(),
                                                self.memo, self.builder.open_call_events(),
                                                self.output_start - self.offset,
                                                final=not partial))
                continue
            events = state.events
            if outcome != NEED:
                return deltas + self._emit(events)
            if state.commit_events != len(events):
                events = events[: state.commit_events]
            if events:
                deltas += self._emit(events)
            self.quiet = self._steady_of(state.leaf, state.events, state.commit_events,
                                         state.resume_pos, state.need_end, state.resume,
                                         state.shaky)  # _steady, one frame fewer
            self.expr = state.resume
            pos = state.resume_pos
            if pos:  # _drop(pos), inlined: most runs drop text
                buffer, gone = self.buffer, self.gone
                gone.append(buffer[:pos])
                self.buffer = buffer[pos:]
                self.offset = offset = self.offset + pos
                if len(gone) > GONE_PIECES:
                    self._origin()
                if self.memo:
                    self._forget_before(offset)
            return deltas
        deltas += self._emit(rest_as_content(self.buffer, 0))
        self._drop(len(self.buffer))
        return deltas

    def _keep_answer(self, met: list[Any], at: int) -> Quiet | None:
        """Return _steady's answer for a decided run's kept outcome (`regexrun.Shapes.decide`),
        and keep it for its key where every text of the key has it: where its leaf waits
        ahead in the text (the answer: that leaf, where it waits, its capture UNKNOWN), or
        where it waits at the start of a text that resumes elsewhere (the answer kept per
        resume point and leaf, `heads`). Kept per stream class (a class that answers
        otherwise keeps nothing: `tests/skipping_streams.AlwaysRuns`)."""
        leaf, resume = met[8], met[3]
        quiet = self._steady_of(leaf, met[1], met[5], met[4], met[6], resume, met[9])
        if quiet is None or type(self)._steady_of is not StreamParser._steady_of:
            return quiet
        if at > 0 and quiet[2] is UNKNOWN and quiet[0] is leaf and not quiet[5]:
            met[11][9] = (type(self), None)  # the answer's only part that varies: at
        elif at == 0 and self.buffer and quiet is self.heads.get((resume, leaf)):
            met[11][9] = (type(self), quiet)
        return quiet

    def _met(self, met: list[Any]) -> list[Delta]:
        """Take a decided run's outcome a stream kept for its text (regexrun.Shapes.run):
        its final events mapped, its answer on the next chunks, its resume point, the text
        before it dropped; as _advance does after a run."""
        _, events, _, resume, pos, commit, _, _, _, _, quiet, _ = met
        deltas = self._emit(events if commit == len(events) else events[:commit]) if commit else []
        self.quiet = quiet
        self.expr = resume
        if pos:  # _drop(pos), inlined (no memo: decided runs leave none)
            buffer, gone = self.buffer, self.gone
            gone.append(buffer[:pos])
            self.buffer = buffer[pos:]
            self.offset += pos
            if len(gone) > GONE_PIECES:
                self._origin()
        return deltas

    def _break(self, found: Break) -> list[Delta]:
        """Keep what came before a break, then read on from it as a new output."""
        at = self.offset + found.cut
        self.raw = at == self.restarted  # nothing read since: the rest can only be content
        if self.raw and self.broke == at:
            return []  # the new output broke where the last one did: one note per place
        deltas = self._emit(found.events)
        self.expr, self.memo = self.start, {}
        self._drop(found.cut)
        self.broke = self.restarted = at
        return deltas

    def message(self) -> Message:
        """Return the message streamed so far."""
        return self.builder.message()

    @property
    def problems(self) -> tuple[ParseProblem, ...]:
        """Return where text was kept as text although a marker promised more (so far).

        A problem is listed once the rest of its line has arrived (or the stream finished),
        so that it quotes the same text as a one-shot parse does."""
        return tuple(self.watch.found)

    @property
    def deviations(self) -> tuple[Deviation, ...]:
        """Return where the output departs from the template's form (so far), in order.

        Like problems, each is listed once the rest of its line has arrived."""
        return collected(self.watch.found, self.watch.notices)

    def _emit(self, events: list[Event]) -> list[Delta]:
        """Map final events to deltas (and note the problems among them)."""
        builder, buffer, handlers = self.builder, self.buffer, HANDLERS
        noted = False
        for role, start, end, flags, info in events:  # MessageBuilder.apply_all, inlined
            handler = handlers.get(role)
            if handler is not None:
                handler(builder, buffer[start:end], flags, info)
            elif role in NOTED:
                noted = True
        if noted:  # the watch is asked only when it has something to take
            self.watch.noted(events, buffer, self._origin)
        sent = builder.sent
        if not sent:
            return []
        builder.sent = []
        return sent

    def _drop(self, pos: int) -> None:
        """Forget the text before pos: it is final (its lines are counted later)."""
        if pos == 0:
            return
        buffer, gone = self.buffer, self.gone
        gone.append(buffer[:pos])
        self.buffer = buffer[pos:]
        self.offset = offset = self.offset + pos
        if len(gone) > GONE_PIECES:
            self._origin()
        if self.memo:
            self._forget_before(offset)

    def _forget_before(self, offset: int) -> None:
        """Drop the memo's lookaheads that started before offset: they never run again."""
        self.memo = {key: at for key, at in self.memo.items() if key[1] >= offset}

    def _origin(self) -> tuple[int, int, int]:
        """Return the offset, line and column of buffer[0], counting the dropped text's lines
        (and giving it to the problem watch) now."""
        if self.gone:
            gone, self.gone = "".join(self.gone), []
            self.watch.dropped(gone)
            offset, line, column = self.origin
            pos = len(gone)
            newlines = gone.count("\n")
            column = pos - gone.rfind("\n") if newlines else column + pos
            self.origin = (offset + pos, line + newlines, column)
        return self.origin


def leaf_kind(leaf: Any) -> int:
    """Say what a run's last leaf can tell of the next chunks (`_steady`): nothing (MUTE: it
    cannot say where it would wait), where it waits (WAITS), or how it reads on (MOVES)."""
    if not isinstance(leaf, Expr) or (leaf.wake is None and not leaf.moves
                                      and type(leaf).waiting_end is Expr.waiting_end):
        return MUTE
    return MOVES if leaf.moves else WAITS


def wake_character(leaf: Expr) -> str:
    """Return the leaf's one wake character ("": none, or several): a held leaf's text
    without it waits at its end (`Expr.wake`), which a stream then knows without asking."""
    wake = leaf.wake
    return next(iter(wake)) if wake is not None and len(wake) == 1 else ""


def head_capture(resume: Any, leaf: Expr) -> Any:
    """Return the event a run from resume would record while leaf reads on, when resume
    starts with a continued capture of leaf (UNKNOWN otherwise).

    Such a run records that one event, from the start of the text, and resumes from the same
    expression: the skip that usually waits for a second run to see this may start at once
    (a value's text right after its opening markup)."""
    while True:
        if isinstance(resume, Sequence):
            resume = resume.items[0]
        elif isinstance(resume, Scope):
            resume = resume.body
        elif isinstance(resume, ToolCapture) and resume.opened:  # records nothing before
            resume = resume.item
        else:
            break
    if isinstance(resume, Capture) and resume.item is leaf and resume.flags & CONTINUED:
        return (resume.role, 0, 0, resume.flags | PARTIAL, resume.info)
    if resume is leaf and isinstance(leaf, ValueAhead) and leaf.opening is not None:
        # A value not begun: a run from resume records its capture's first piece (not
        # continued) from the start of the text.
        role, flags, info, _ = leaf.opening
        return (role, 0, 0, flags | PARTIAL, info)
    return UNKNOWN


def moving_quiet(resume: Any, resume_pos: int, leaf: Expr, tentative: Any,
                 at: int) -> Quiet | None:
    """Return how a stream may skip runs while a leaf that moves reads on: only from the head
    of the resume point (head_capture), where its capture stretches; the one tentative event
    allowed is that capture's own unfinished tail (a token cut short, resumed from its
    start)."""
    capture = head_capture(resume, leaf)
    if capture is UNKNOWN:
        return None
    if tentative and (len(tentative) > 1 or tentative[0][0] is not capture[0]
                      or tentative[0][1] != resume_pos):
        return None
    return (leaf, at, capture, None, None, True, "")


def with_leaf(resume: Expr, leaf: Expr, moved: Expr) -> Expr:
    """Return resume with leaf, at its head (as head_capture finds it), replaced by the same
    leaf in a new state, built as a run that moved the leaf would build its resume point (a
    ValueAhead read into: the capture it opens, continued, around the moved leaf)."""
    if resume is leaf:
        if isinstance(leaf, ValueAhead) and leaf.opening is not None:
            role, flags, info, _ = leaf.opening
            return Capture(role, moved, info, flags | CONTINUED)
        return moved
    if isinstance(resume, Sequence):
        return Sequence((with_leaf(resume.items[0], leaf, moved), *resume.items[1:]))
    if isinstance(resume, Scope):
        return Scope(resume.names, with_leaf(resume.body, leaf, moved))
    if isinstance(resume, ToolCapture):
        return ToolCapture(with_leaf(resume.item, leaf, moved), opened=True)
    assert isinstance(resume, Capture), f"{resume!r} does not hold {leaf!r} at its head"
    return Capture(resume.role, with_leaf(resume.item, leaf, moved), resume.info,
                   resume.flags | CONTINUED)


def stream_parse(parser: Parser, chunks: Iterable[str]) -> list[Delta]:
    """Feed every chunk then finish; return all deltas."""
    stream = StreamParser(parser)
    deltas = [delta for chunk in chunks for delta in stream.feed(chunk)]
    return deltas + stream.finish()


class Accumulator:
    """Fold deltas, as they arrive, into the message a client assembles."""

    def __init__(self) -> None:
        self.content: list[str] = []
        self.reasoning: list[str] = []
        # Per call index: [id, name, pieces of arguments] (a list: the fold writes its fields
        # by position, cheaper than a dict's by key; a stream folds one delta per chunk)
        self.calls: dict[int, list[Any]] = {}

    def add(self, delta: Delta) -> None:
        """Apply one delta."""
        content, reasoning, tool_calls = delta
        if content:
            self.content.append(content)
        if reasoning:
            self.reasoning.append(reasoning)
        for index, call_id, name, arguments in tool_calls:
            try:  # a dict's subscript, not get(): a method call costs more than the try
                call = self.calls[index]
            except KeyError:
                call = self.calls[index] = ["", "", []]
            if call_id is not None:
                call[0] = call_id
            if name is not None:
                call[1] = name
            if arguments:
                call[2].append(arguments)

    def message(self) -> Message:
        """Return the message the deltas so far make."""
        tool_calls = tuple(
            ToolCall(name=name, arguments="".join(pieces), id=call_id)
            for _, (call_id, name, pieces) in sorted(self.calls.items())
        )
        return Message("".join(self.content), "".join(self.reasoning), tool_calls)


def accumulate(deltas: Iterable[Delta]) -> Message:
    """Rebuild the message a client would assemble from the deltas."""
    accumulator = Accumulator()
    for delta in deltas:
        accumulator.add(delta)
    return accumulator.message()
