"""JSON endpoints of the daily tools: render a conversation, compare two templates, serve it.

The same doors as the pages: playground (render), comparing (compare), serving (serve it).

- `POST /api/templates/<sha256>/render`: body a render request ({"messages", "tools",
  "kwargs", "add_generation_prompt", "continue_final_message", "bos_token", "eos_token"}),
  optionally with "vs": a second request; answers the prompt (and the second one's, with
  their diff).
- `GET /api/compare/<sha256 a>/<sha256 b>/`: the canonical comparison JSON (a permalink).
- `GET /api/analyses/<id>/serve`: the flags per engine and the structural tag.
Errors are JSON {"error": {"code", "message"}}.
"""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from analyzer.analysis.playground import RenderResult
from lab import untrusted_json
from lab.analyses import comparing, engine, playground, serving
from lab.analyses.exports import BAD_REQUEST, json_error
from lab.analyses.models import Analysis, Template

NOT_FOUND = 404
UNPROCESSABLE = 422


def stored(sha256: str) -> Template | None:
    return Template.objects.filter(sha256=sha256).first()


@csrf_exempt  # a JSON API for scripts: no cookies are read
@require_POST
def render_template(request: HttpRequest, sha256: str) -> JsonResponse:
    """Render the posted request (and its "vs" twin) through a stored template."""
    template = stored(sha256)
    if template is None:
        return json_error(NOT_FOUND, "not_found", f"no stored template {sha256}")
    try:
        body = untrusted_json.loads(request.body or b"{}")
        if not isinstance(body, dict):
            raise ValueError("expected a JSON object with \"messages\"")
        vs = body.pop("vs", None)
        return JsonResponse(render_answer(template, body, vs))
    except ValueError as exc:
        return json_error(BAD_REQUEST, "bad_request", f"body: {exc}")
    except engine.AnalyzerError as exc:
        return json_error(UNPROCESSABLE, "render_failed", str(exc))


def render_answer(template: Template, body: dict[str, Any], vs: Any) -> dict[str, Any]:
    """The render (and, with a second request, both renders and their diff)."""
    left = json.dumps(body)
    if vs is None:
        return result_json(playground.render_stored(template, left))
    pair = playground.render_pair(template, left, json.dumps(vs))
    d = pair.diff
    return {"left": result_json(pair.left), "right": result_json(pair.right),
            "identical": pair.identical, "changed_inputs": list(pair.changed_inputs),
            "diff": {"prefix": d.prefix, "left": d.left, "right": d.right, "suffix": d.suffix}}


def result_json(result: RenderResult) -> dict[str, Any]:
    return {"prompt": result.prompt, "request": json.loads(result.request.to_json()),
            "render_mode": result.render_mode.value, "render_note": result.render_note,
            "template_kwargs": list(result.template_kwargs),
            "unused_kwargs": list(result.unused_kwargs)}


@require_GET
def compare(request: HttpRequest, sha_a: str, sha_b: str) -> HttpResponse:
    """The canonical comparison of two stored templates."""
    a, b = stored(sha_a), stored(sha_b)
    if a is None or b is None:
        missing = sha_a if a is None else sha_b
        return json_error(NOT_FOUND, "not_found", f"no stored template {missing}")
    try:
        comparison = comparing.compare_stored(a, b)
    except engine.AnalyzerError as exc:
        return json_error(UNPROCESSABLE, "compare_failed", str(exc))
    return HttpResponse(comparing.comparison_json(comparison), content_type="application/json")


@require_GET
def serve(request: HttpRequest, pk: int) -> JsonResponse:
    """The flags each engine needs for a finished analysis, and the structural tag."""
    analysis = Analysis.objects.select_related("template").filter(
        pk=pk, status=Analysis.Status.DONE).first()
    if analysis is None:
        return json_error(NOT_FOUND, "not_found", f"no finished analysis with id {pk}")
    card = serving.serve_card(analysis.template, analysis.result_json)
    return JsonResponse({
        "engines": [advice.to_dict() for advice in card.engines],
        "structural_tag": {"available": bool(card.tag_json), "problem": card.tag_problem,
                           "note": card.tag_note,
                           "response_format": json.loads(card.tag_json) if card.tag_json else None,
                           "llguidance_check": card.tag_check}})
