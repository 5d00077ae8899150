"""JSON payloads for scripts and bug bots; the same data the pages show."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.urls import reverse

from lab.analyses.models import Analysis, Template, TemplateOrigin


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def analysis_summary(analysis: Analysis, request: HttpRequest) -> dict[str, Any]:
    """Describe an analysis without its result."""
    return {
        "id": analysis.pk,
        "url": request.build_absolute_uri(analysis.get_absolute_url()),
        "template_sha256": analysis.template.sha256,
        "analyzer_version": analysis.analyzer_version,
        "options": analysis.options,
        "status": analysis.status,
        "error": analysis.error or None,
        "created_at": _iso(analysis.created_at),
        "started_at": _iso(analysis.started_at),
        "finished_at": _iso(analysis.finished_at),
        "duration_ms": analysis.duration_ms,
    }


def analysis_payload(analysis: Analysis, request: HttpRequest) -> dict[str, Any]:
    """Describe an analysis with its result (the analyzer's JSON, parsed)."""
    payload = analysis_summary(analysis, request)
    payload["template_url"] = request.build_absolute_uri(analysis.template.get_absolute_url())
    payload["result_url"] = (
        request.build_absolute_uri(reverse("api-analysis-result", args=[analysis.pk]))
        if analysis.status == Analysis.Status.DONE
        else None
    )
    payload["result"] = analysis.result
    return payload


def origin_payload(origin: TemplateOrigin) -> dict[str, Any]:
    """Describe where a template came from."""
    return {
        "kind": origin.kind,
        "filename": origin.filename,
        "repo_id": origin.repo_id,
        "revision": origin.revision,
        "commit_sha": origin.commit_sha,
        "template_name": origin.template_name,
        "file_sha256": origin.file_sha256,
        "created_at": _iso(origin.created_at),
    }


def template_payload(template: Template, request: HttpRequest) -> dict[str, Any]:
    """Describe a template: its source, special tokens, origins and analyses."""
    return {
        "sha256": template.sha256,
        "url": request.build_absolute_uri(template.get_absolute_url()),
        "template_name": template.template_name,
        "bos_token": template.bos_token,
        "eos_token": template.eos_token,
        "source": template.source,
        "origins": [origin_payload(o) for o in template.origins.order_by("created_at")],
        "analyses": [analysis_summary(a, request) for a in template.analyses.listed()],
    }


def sibling_templates(template: Template) -> list[tuple[str, Template]]:
    """Other named templates read from the same file as this one, with their names."""
    files = template.origins.exclude(file_sha256="").values_list("file_sha256", flat=True)
    origins = (
        TemplateOrigin.objects.filter(file_sha256__in=list(files))
        .exclude(template=template)
        .select_related("template")
    )
    seen: dict[str, tuple[str, Template]] = {}
    for origin in origins:
        seen.setdefault(origin.template.sha256, (origin.template_name, origin.template))
    return sorted(seen.values(), key=lambda pair: pair[0])
