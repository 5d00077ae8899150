"""Downloads of a finished analysis: grammar, parser dump, analysis JSON and verify report.

Each answers a file (Content-Disposition: attachment) named after the analysis. The grammar
and the parser follow request options given as `?options=<JSON>` (the same keys as the
analysis page's options form); without them, the options the page starts with.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_GET

from lab import untrusted_json
from lab.analyses import engine, parsing, samples
from lab.analyses.models import Analysis

BAD_REQUEST = 400
CONFLICT = 409


def attachment(body: str, filename: str, content_type: str) -> HttpResponse:
    """A response the browser saves as `filename`."""
    response = HttpResponse(body, content_type=f"{content_type}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def json_error(status: int, code: str, message: str) -> JsonResponse:
    """An API error: {"error": {"code", "message"}} with its HTTP status."""
    return JsonResponse({"error": {"code": code, "message": message}}, status=status)


def finished(pk: int) -> Analysis:
    return get_object_or_404(Analysis.objects.select_related("template"), pk=pk,
                             status=Analysis.Status.DONE)


def request_options(request: HttpRequest, analysis: Analysis) -> parsing.ParserOptions:
    """The options in `?options=` over the page's starting options (bad JSON raises)."""
    base = samples.sample_for(analysis).options()
    raw = request.GET.get("options", "")
    if not raw:
        return base
    data: Any = untrusted_json.loads(raw)
    if not isinstance(data, dict):
        raise ValueError("options: expected a JSON object")
    return parsing.options_from_dict(data, base)


def generated_or_error(request: HttpRequest, pk: int) -> parsing.GeneratedParser | JsonResponse:
    analysis = finished(pk)
    try:
        options = request_options(request, analysis)
    except ValueError as exc:
        return json_error(BAD_REQUEST, "bad_options", f"options: not usable JSON ({exc})")
    generated = parsing.generate(analysis.result_json, options)
    if not generated.available:
        return json_error(CONFLICT, "no_parser", generated.problem)
    return generated


@require_GET
def grammar_file(request: HttpRequest, pk: int) -> HttpResponse:
    """The GBNF grammar for the request options, as `analysis-<id>.gbnf`, with its laziness,
    triggers and preserved tokens as leading comments (as `template-lab grammar` prints it)."""
    generated = generated_or_error(request, pk)
    if isinstance(generated, JsonResponse):
        return generated
    return attachment(generated.gbnf_file, f"analysis-{pk}.gbnf", "text/plain")


@require_GET
def parser_file(request: HttpRequest, pk: int) -> HttpResponse:
    """The generated parser's rules (its dump), as `analysis-<id>-parser.txt`."""
    generated = generated_or_error(request, pk)
    if isinstance(generated, JsonResponse):
        return generated
    return attachment(generated.peg, f"analysis-{pk}-parser.txt", "text/plain")


@require_GET
def analysis_file(request: HttpRequest, pk: int) -> HttpResponse:
    """The analyzer's canonical JSON, byte for byte, as `analysis-<id>.json`."""
    return attachment(finished(pk).result_json, f"analysis-{pk}.json", "application/json")


@require_GET
def verify_file(request: HttpRequest, pk: int) -> HttpResponse:
    """The round-trip verify report (canonical JSON), as `analysis-<id>-verify.json`."""
    analysis = finished(pk)
    try:
        report = engine.verify_report(analysis.template, analysis.result_json)
    except engine.AnalyzerError as exc:
        return json_error(CONFLICT, "verify_failed", str(exc))
    return attachment(report, f"analysis-{pk}-verify.json", "application/json")
