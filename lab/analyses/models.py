"""Templates stored once by content hash, where they came from, and their analyses."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.db import models
from django.urls import reverse
from django.utils import timezone

from lab.analyses.family import detect_family


def options_key(options: dict[str, Any]) -> str:
    """Hash request options canonically, so equal options find the same analysis."""
    canonical = json.dumps(options, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def template_key(source_sha256: str, source: str, bos_token: str, eos_token: str) -> str:
    """Identify a template by its source and special tokens.

    A source without special tokens keeps its own sha256 as key, so permalinks of such
    templates are the source's hash; with tokens, the key hashes all three.
    """
    if not bos_token and not eos_token:
        return source_sha256
    canonical = json.dumps([source, bos_token, eos_token], ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class Template(models.Model):
    """A chat template's source with its special tokens, stored once per (source, bos, eos).

    The same source fetched with other special tokens (another repo's tokenizer_config.json)
    is another template: `{{ bos_token }}` renders differently.
    """

    # The identity: template_key(); null only for rows written without intake (tests).
    key = models.CharField(max_length=64, unique=True, null=True, blank=True)
    sha256 = models.CharField(max_length=64, db_index=True)  # of the source alone
    source = models.TextField()
    bos_token = models.CharField(max_length=500, blank=True)
    eos_token = models.CharField(max_length=500, blank=True)
    template_name = models.CharField(max_length=200, default="default")
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"template {self.short_sha}"

    def get_absolute_url(self) -> str:
        return reverse("template-detail", args=[self.key or self.sha256])

    @property
    def short_sha(self) -> str:
        return (self.key or self.sha256)[:12]

    @property
    def display_name(self) -> str:
        """The title of the template: given, or derived from where it came from or its family."""
        return title_of(self, list(self.origins.order_by("created_at")))


def title_of(template: Template, origins: list[TemplateOrigin]) -> str:
    """Pick a title: one given, else the Hub repo id or the file name, else the family."""
    for origin in origins:
        if origin.title:
            return origin.title
    for origin in origins:
        if origin.kind != TemplateOrigin.Kind.PASTE and origin.kind != TemplateOrigin.Kind.EDIT:
            return origin.label
    family = detect_family(template.source)
    kind = "edited" if any(o.kind == TemplateOrigin.Kind.EDIT for o in origins) else "pasted"
    return f"{family} template ({kind})" if family else f"{kind} template"


class TemplateOrigin(models.Model):
    """One way a template arrived: pasted, uploaded, fetched from the Hub, imported."""

    class Kind(models.TextChoices):
        PASTE = "paste"
        UPLOAD = "upload"
        HUB = "hub"
        IMPORT = "import"
        EDIT = "edit"  # edited from another stored template (`parent`)

    template = models.ForeignKey(Template, on_delete=models.CASCADE, related_name="origins")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    filename = models.CharField(max_length=300, blank=True)
    repo_id = models.CharField(max_length=200, blank=True)
    revision = models.CharField(max_length=200, blank=True)  # as asked (branch, tag or sha)
    commit_sha = models.CharField(max_length=64, blank=True)  # as resolved by the Hub
    template_name = models.CharField(max_length=200, blank=True)
    file_sha256 = models.CharField(max_length=64, blank=True)  # the file it was read from
    title = models.CharField(max_length=200, blank=True)  # as the user gave it
    parent = models.ForeignKey(
        Template, null=True, blank=True, on_delete=models.SET_NULL, related_name="edits"
    )
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
        if self.kind == self.Kind.EDIT:
            return "edited"
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
