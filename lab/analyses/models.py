"""Templates stored once by content hash, where they came from, and their analyses."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.db import models
from django.urls import reverse
from django.utils import timezone


def options_key(options: dict[str, Any]) -> str:
    """Hash request options canonically, so equal options find the same analysis."""
    canonical = json.dumps(options, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class Template(models.Model):
    """A chat template's source, stored once and addressed by the sha256 of its source."""

    sha256 = models.CharField(max_length=64, unique=True)
    source = models.TextField()
    # Special tokens and name travel with the first upload of this source.
    bos_token = models.CharField(max_length=500, blank=True)
    eos_token = models.CharField(max_length=500, blank=True)
    template_name = models.CharField(max_length=200, default="default")
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"template {self.sha256[:12]}"

    def get_absolute_url(self) -> str:
        return reverse("template-detail", args=[self.sha256])

    @property
    def short_sha(self) -> str:
        return self.sha256[:12]

    @property
    def display_name(self) -> str:
        origin = self.origins.order_by("created_at").first()
        if origin is None or origin.kind == TemplateOrigin.Kind.PASTE:
            return "pasted template"
        return origin.label


class TemplateOrigin(models.Model):
    """One way a template arrived: pasted, uploaded, fetched from the Hub, imported."""

    class Kind(models.TextChoices):
        PASTE = "paste"
        UPLOAD = "upload"
        HUB = "hub"
        IMPORT = "import"

    template = models.ForeignKey(Template, on_delete=models.CASCADE, related_name="origins")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    filename = models.CharField(max_length=300, blank=True)
    repo_id = models.CharField(max_length=200, blank=True)
    revision = models.CharField(max_length=200, blank=True)  # as asked (branch, tag or sha)
    commit_sha = models.CharField(max_length=64, blank=True)  # as resolved by the Hub
    template_name = models.CharField(max_length=200, blank=True)
    file_sha256 = models.CharField(max_length=64, blank=True)  # the file it was read from
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["repo_id", "commit_sha"]),
            models.Index(fields=["file_sha256"]),
        ]

    def __str__(self) -> str:
        return f"{self.kind}: {self.label}"

    @property
    def label(self) -> str:
        if self.kind == self.Kind.PASTE:
            return "pasted"
        name = f" [{self.template_name}]" if self.template_name not in ("", "default") else ""
        if self.kind == self.Kind.HUB:
            return f"{self.repo_id}@{self.commit_sha[:10]}{name}"
        return (self.filename or self.get_kind_display()) + name


class AnalysisQuerySet(models.QuerySet["Analysis"]):
    """Analyses as lists show them: without the result JSON or the template source."""

    def listed(self) -> AnalysisQuerySet:
        """Rows for a list: a result can be megabytes, and a list shows only its status."""
        return self.select_related("template").defer("result_json", "template__source")


class Analysis(models.Model):
    """One run of the analyzer: (template, analyzer version, options) -> result or error."""

    objects = AnalysisQuerySet.as_manager()

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    template = models.ForeignKey(Template, on_delete=models.CASCADE, related_name="analyses")
    analyzer_version = models.CharField(max_length=100)
    options = models.JSONField(default=dict)
    options_key = models.CharField(max_length=64)
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.QUEUED, db_index=True
    )
    result_json = models.TextField(blank=True)  # the analyzer's canonical JSON, byte for byte
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.FloatField(null=True, blank=True)  # analyzer time only
    # Delivery bookkeeping (lab.analyses.claims, lab.analyses.reconcile): when the task was last
    # handed to the broker (None: never, e.g. the broker was down), which task holds the row
    # while it runs and until when, and how many times a worker took it.
    enqueued_at = models.DateTimeField(null=True, blank=True)
    claimed_by = models.CharField(max_length=64, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)

    class Meta:
        indexes = [models.Index(fields=["template", "analyzer_version", "options_key"])]
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"analysis {self.pk} ({self.status})"

    def get_absolute_url(self) -> str:
        return reverse("analysis-detail", args=[self.pk])

    @property
    def is_pending(self) -> bool:
        return self.status in (self.Status.QUEUED, self.Status.RUNNING)

    @property
    def is_waiting_for_broker(self) -> bool:
        return self.status == self.Status.QUEUED and self.enqueued_at is None

    @property
    def result(self) -> dict[str, Any] | None:
        return json.loads(self.result_json) if self.result_json else None

    @property
    def queue_ms(self) -> float | None:
        if self.started_at is None:
            return None
        return (self.started_at - self.created_at).total_seconds() * 1000
