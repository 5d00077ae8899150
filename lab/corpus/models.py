"""Corpus entries, runs over the whole corpus, and one summary row per template and run.

The dashboard reads only CorpusRun and CorpusResult columns: every figure it shows or filters
on is a column (indexed with the run), so a page of a run costs the same few queries whether
the corpus holds fifty templates or five thousand.
"""

from __future__ import annotations

import json
from typing import Any

from django.db import models
from django.urls import reverse
from django.utils import timezone

from lab.analyses.models import Analysis, Template


class CorpusTemplate(models.Model):
    """A template the corpus tracks, with where it comes from."""

    class Source(models.TextChoices):
        HUB = "hub"  # `corpus sync`, from the manifest
        IMPORT = "import"  # `corpus import DIR`

    name = models.CharField(max_length=300, unique=True)  # file stem or repo id [template]
    template = models.ForeignKey(Template, on_delete=models.PROTECT, related_name="corpus_entries")
    source = models.CharField(max_length=10, choices=Source.choices)
    family = models.CharField(max_length=100, blank=True)
    repo_id = models.CharField(max_length=200, blank=True)
    revision = models.CharField(max_length=200, blank=True)  # as the manifest asks
    commit_sha = models.CharField(max_length=64, blank=True)  # as the Hub resolved it
    filename = models.CharField(max_length=300, blank=True)
    template_name = models.CharField(max_length=200, blank=True)
    active = models.BooleanField(default=True, db_index=True)  # taken by the next run
    # Where the entry comes from: "import:<absolute path>#<template name>" or
    # "hub:<repo>/<file>#<template name>" (lab.corpus.entries.origin_key). Only the same origin
    # may update an entry; None for entries made before keys existed (adopted by name).
    origin_key = models.CharField(max_length=1000, unique=True, null=True, blank=True)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class CorpusRun(models.Model):
    """One pass of the analyzer (one version) over every active corpus template."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    analyzer_version = models.CharField(max_length=100, db_index=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    trigger = models.CharField(max_length=20, default="command")  # command | dashboard | test
    total = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Filled when the run closes (the chord's callback), compared with `baseline`.
    baseline = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    regressions = models.PositiveIntegerField(default=0)  # templates made worse
    improvements = models.PositiveIntegerField(default=0)
    changed = models.PositiveIntegerField(default=0)  # templates with any field changed
    round_trip_failed = models.PositiveIntegerField(default=0)
    grammar_failed = models.PositiveIntegerField(default=0)
    errors = models.PositiveIntegerField(default=0)
    # The pass-rate chart's counts (lab.corpus.chart), so it reads 30 runs, not their rows:
    # templates whose round trip / grammar passed, and those where it was checked at all.
    round_trip_passed = models.PositiveIntegerField(default=0)
    round_trip_checked = models.PositiveIntegerField(default=0)
    grammar_passed = models.PositiveIntegerField(default=0)
    grammar_checked = models.PositiveIntegerField(default=0)
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"corpus run {self.pk} ({self.status})"

    def get_absolute_url(self) -> str:
        return reverse("corpus-run", args=[self.pk])

    @property
    def is_pending(self) -> bool:
        return self.status in (self.Status.QUEUED, self.Status.RUNNING)

    @property
    def is_worse(self) -> bool:
        return self.regressions > 0

    @property
    def duration_s(self) -> float | None:
        if self.started_at is None or self.finished_at is None:
            return None
        return (self.finished_at - self.started_at).total_seconds()


class Verdict(models.TextChoices):
    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"
    NONE = ""  # not evaluated (the analysis failed)


class CorpusResult(models.Model):
    """What one run found for one template: the summary columns and the full verification."""

    class Status(models.TextChoices):
        DONE = "done"
        ERROR = "error"  # the template could not be analyzed (or the worker crashed)

    run = models.ForeignKey(CorpusRun, on_delete=models.CASCADE, related_name="results")
    entry = models.ForeignKey(CorpusTemplate, on_delete=models.CASCADE, related_name="results")
    name = models.CharField(max_length=300)  # the entry's name, copied for search and sort
    template_sha256 = models.CharField(max_length=64)
    analysis = models.ForeignKey(
        Analysis, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    analyzer_version = models.CharField(max_length=100)
    status = models.CharField(max_length=10, choices=Status.choices)
    error = models.TextField(blank=True)
    tool_format = models.CharField(max_length=30, blank=True)
    reasoning_mode = models.CharField(max_length=30, blank=True)
    content_mode = models.CharField(max_length=30, blank=True)
    key_markers = models.CharField(max_length=500, blank=True)  # preserved tokens, for display
    markers_json = models.TextField(default="{}")  # {"reasoning.start": "<think>", ...}
    round_trip = models.CharField(max_length=4, choices=Verdict.choices, blank=True)
    cases_passed = models.PositiveIntegerField(default=0)
    cases_failed = models.PositiveIntegerField(default=0)
    cases_total = models.PositiveIntegerField(default=0)
    failed_cases = models.CharField(max_length=300, blank=True)  # names, comma-separated
    grammar = models.CharField(max_length=4, choices=Verdict.choices, blank=True)
    vectors_total = models.PositiveIntegerField(default=0)
    vectors_passed = models.PositiveIntegerField(default=0)
    # The perturbation corpus (analyzer.checks.robustness): cases that fit the template.
    robustness_passed = models.PositiveIntegerField(default=0)
    robustness_total = models.PositiveIntegerField(default=0)
    analysis_ms = models.FloatField(null=True, blank=True)
    verify_ms = models.FloatField(null=True, blank=True)
    verification_json = models.TextField(blank=True)  # analyzer.checks.verify's canonical JSON
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["run", "entry"], name="corpus_result_once_per_run"),
        ]
        indexes = [
            models.Index(fields=["run", "name"]),
            models.Index(fields=["run", "tool_format"]),
            models.Index(fields=["run", "reasoning_mode"]),
            models.Index(fields=["run", "round_trip"]),
            models.Index(fields=["run", "grammar"]),
            models.Index(fields=["run", "status"]),
        ]

    def __str__(self) -> str:
        return f"{self.name} in run {self.run_id}"

    @property
    def markers(self) -> dict[str, str]:
        value: dict[str, str] = json.loads(self.markers_json or "{}")
        return value

    @property
    def cases_skipped(self) -> int:
        """Cases the template cannot show (neither passed nor failed)."""
        return max(self.cases_total - self.cases_passed - self.cases_failed, 0)

    @property
    def key_marker_list(self) -> list[str]:
        """The key markers one by one, so the page never wraps inside one."""
        return self.key_markers.split()

    @property
    def vector_rate(self) -> float | None:
        return self.vectors_passed / self.vectors_total if self.vectors_total else None

    def summary(self) -> dict[str, Any]:
        """The fields a diff compares (and the JSON endpoint shows)."""
        return {field: getattr(self, field) for field in SUMMARY_FIELDS}


# The columns that describe a result (what diffs and the JSON endpoint read).
SUMMARY_FIELDS = (
    "name",
    "template_sha256",
    "analysis_id",
    "analyzer_version",
    "status",
    "error",
    "tool_format",
    "reasoning_mode",
    "content_mode",
    "key_markers",
    "markers_json",
    "round_trip",
    "cases_passed",
    "cases_failed",
    "cases_total",
    "failed_cases",
    "grammar",
    "vectors_total",
    "vectors_passed",
    "robustness_passed",
    "robustness_total",
    "analysis_ms",
    "verify_ms",
)


class EntryAttempt(models.Model):
    """How often a run's task for one template was started (a redelivery counts again).

    A template whose evaluation kills its worker process every time would otherwise be
    redelivered for good: past LAB_MAX_ATTEMPTS starts its row fails instead (lab.corpus.runs).
    """

    run = models.ForeignKey(CorpusRun, on_delete=models.CASCADE, related_name="+")
    entry = models.ForeignKey(CorpusTemplate, on_delete=models.CASCADE, related_name="+")
    attempts = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "entry"], name="corpus_attempt_once_per_run"),
        ]

    def __str__(self) -> str:
        return f"entry {self.entry_id} of run {self.run_id}: {self.attempts} attempt(s)"
