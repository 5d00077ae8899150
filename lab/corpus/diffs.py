"""Compare two corpus runs template by template: what changed, and what got worse.

Worse means a user of that template loses something: the analysis now fails, tool calls are
no longer found, the round trip or the grammar check no longer passes (or fails more cases),
or fewer parse vectors pass. Other changes (formats, markers, a new template source) are
listed without judgement.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from django.db.models import Exists, OuterRef, Q, QuerySet

from lab.corpus.models import SUMMARY_FIELDS, CorpusResult, CorpusRun

Row = Mapping[str, Any]

# A verification that passes beats one with nothing to check, which beats a failing one.
VERDICT_RANK = {"pass": 2, "skip": 1, "fail": 0, "": 0}
MODE_FIELDS = ("tool_format", "reasoning_mode", "content_mode")


@dataclass(frozen=True)
class FieldChange:
    """One field of one template, before and after."""

    field: str
    before: str
    after: str
    worse: bool = False
    better: bool = False


@dataclass(frozen=True)
class TemplateDiff:
    """A template whose result differs between the two runs."""

    name: str
    base: Row | None  # the base run's summary (None: not in the base run)
    head: Row | None
    changes: tuple[FieldChange, ...]

    @cached_property  # read for sorting, counting and showing: computed once
    def worse(self) -> bool:
        return any(change.worse for change in self.changes)

    @cached_property
    def better(self) -> bool:
        return any(change.better for change in self.changes) and not self.worse


@dataclass(frozen=True)
class RunDiff:
    """Every changed template between a base run and a head run."""

    base: CorpusRun
    head: CorpusRun
    templates: tuple[TemplateDiff, ...]  # changed ones only, worse first, then by name
    compared: int  # templates present in either run

    @cached_property  # the page and the JSON read these several times
    def regressions(self) -> tuple[TemplateDiff, ...]:
        return tuple(t for t in self.templates if t.worse)

    @cached_property
    def improvements(self) -> tuple[TemplateDiff, ...]:
        return tuple(t for t in self.templates if t.better)


# Every column `compare` reads: a row equal to the other run's row in all of them has no change.
COMPARED_FIELDS = (
    "status", *MODE_FIELDS, "template_sha256", "round_trip", "grammar", "cases_passed",
    "cases_failed", "cases_total", "failed_cases", "vectors_passed", "vectors_total",
    "markers_json",
)


def differing_summaries(run: CorpusRun, other: CorpusRun) -> dict[int, Row]:
    """Read the summary columns of the run's rows that differ from (or are missing in) the other
    run, keyed by corpus entry (one query: the database skips the unchanged rows)."""
    same = {field: OuterRef(field) for field in COMPARED_FIELDS}
    unchanged = Exists(
        CorpusResult.objects.filter(run=other, entry_id=OuterRef("entry_id"), **same)
    )
    return _by_entry(CorpusResult.objects.filter(run=run).exclude(unchanged))


def counterparts(base: CorpusRun, head: CorpusRun, changed: Iterable[int]) -> dict[int, Row]:
    """The base run's rows of the changed templates and of those the head run lacks (one query)."""
    in_head = CorpusResult.objects.filter(run=head).values("entry_id")
    rows = CorpusResult.objects.filter(run=base).filter(
        Q(entry_id__in=list(changed)) | ~Q(entry_id__in=in_head)
    )
    return _by_entry(rows)


def _by_entry(rows: QuerySet[CorpusResult]) -> dict[int, Row]:
    fields = ("id", "entry_id", *SUMMARY_FIELDS)
    return {row["entry_id"]: row for row in rows.order_by().values(*fields)}


def diff_runs(base: CorpusRun, head: CorpusRun) -> RunDiff:
    """Compare two runs (three queries, reading only the rows that changed)."""
    after = differing_summaries(head, base)
    before = counterparts(base, head, after.keys())
    changed = []
    for entry in before.keys() | after.keys():
        # A head row that differs is read with its base row; a base row read without a head
        # row is missing in the head run (and a head row without a base row is new).
        old, new = before.get(entry), after.get(entry)
        changes = compare(old, new)
        if changes:
            name = str((new or old or {}).get("name", ""))
            changed.append(TemplateDiff(name, old, new, changes))
    changed.sort(key=lambda t: (not t.worse, t.name))
    only_in_base = len(before.keys() - after.keys())
    compared = CorpusResult.objects.filter(run=head).count() + only_in_base
    return RunDiff(base, head, tuple(changed), compared)


def compare(old: Row | None, new: Row | None) -> tuple[FieldChange, ...]:
    """List the fields that differ between two summaries of one template."""
    if old is None or new is None:
        return (
            FieldChange("template", "present" if old else "absent", "present" if new else "absent"),
        )
    changes = [
        *status_change(old, new),
        *mode_changes(old, new),
        *source_change(old, new),
        *verdict_changes(old, new),
        *vector_change(old, new),
        *marker_changes(old, new),
    ]
    return tuple(changes)


def status_change(old: Row, new: Row) -> Iterable[FieldChange]:
    if old["status"] != new["status"]:
        yield FieldChange(
            "status",
            old["status"],
            new["status"],
            worse=new["status"] == CorpusResult.Status.ERROR,
            better=old["status"] == CorpusResult.Status.ERROR,
        )


def mode_changes(old: Row, new: Row) -> Iterable[FieldChange]:
    for field in MODE_FIELDS:
        if old[field] != new[field]:
            # Losing the tool-call format means the template's calls are no longer parsed.
            lost = (
                field == "tool_format"
                and old[field] not in ("", "NONE")
                and new[field] in ("", "NONE")
            )
            gained = (
                field == "tool_format"
                and old[field] in ("", "NONE")
                and new[field] not in ("", "NONE")
            )
            yield FieldChange(field, old[field], new[field], worse=lost, better=gained)


def source_change(old: Row, new: Row) -> Iterable[FieldChange]:
    if old["template_sha256"] != new["template_sha256"]:
        yield FieldChange(
            "template source", old["template_sha256"][:12], new["template_sha256"][:12]
        )


def verdict_text(row: Row, field: str) -> str:
    """Show a verdict with its case counts and failed cases ("fail (6/8: call, call-id)")."""
    verdict = row[field] or "none"
    if field != "round_trip" or not row["cases_total"]:
        return verdict
    failed = row["failed_cases"].replace(",", ", ")
    return (
        f"{verdict} ({row['cases_passed']}/{row['cases_total']}{': ' + failed if failed else ''})"
    )


def visible(text: str) -> str:
    """Show a marker with its whitespace escaped ("\\n" for a newline), as JSON would."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


def verdict_changes(old: Row, new: Row) -> Iterable[FieldChange]:
    for field in ("round_trip", "grammar"):
        before, after = VERDICT_RANK[old[field]], VERDICT_RANK[new[field]]
        more_failures = field == "round_trip" and new["cases_failed"] > old["cases_failed"]
        fewer_failures = field == "round_trip" and new["cases_failed"] < old["cases_failed"]
        if old[field] != new[field] or (
            field == "round_trip"
            and (more_failures or fewer_failures or old["failed_cases"] != new["failed_cases"])
        ):
            yield FieldChange(
                field,
                verdict_text(old, field),
                verdict_text(new, field),
                worse=after < before or (after == before and more_failures),
                better=after > before or (after == before and fewer_failures),
            )


def vector_rate(row: Row) -> float | None:
    return row["vectors_passed"] / row["vectors_total"] if row["vectors_total"] else None


def vector_change(old: Row, new: Row) -> Iterable[FieldChange]:
    if (old["vectors_passed"], old["vectors_total"]) == (
        new["vectors_passed"],
        new["vectors_total"],
    ):
        return
    before, after = vector_rate(old), vector_rate(new)
    worse = before is not None and (after is None or after < before)
    better = after is not None and (before is None or after > before)
    yield FieldChange(
        "vectors",
        f"{old['vectors_passed']}/{old['vectors_total']}",
        f"{new['vectors_passed']}/{new['vectors_total']}",
        worse=worse,
        better=better,
    )


def marker_changes(old: Row, new: Row) -> Iterable[FieldChange]:
    before = json.loads(old["markers_json"] or "{}")
    after = json.loads(new["markers_json"] or "{}")
    for role in sorted(before.keys() | after.keys()):
        if before.get(role, "") != after.get(role, ""):
            yield FieldChange(role, visible(before.get(role, "")), visible(after.get(role, "")))
