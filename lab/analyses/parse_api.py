"""`POST /api/analyses/<id>/parse`: parse a model output with the analysis' generated parser.

Body (JSON): {"output": TEXT, "options": {tools, enable_thinking, parallel_tool_calls,
reasoning_format, tool_choice, json_schema}, "partial": bool, "stream": bool,
"chunk": N}. Answers {"message": {...}, "problems": [...], "deviations": [...]}; with
"stream": true, Server-Sent Events: one `delta` event per delta (the output fed N characters
at a time, default 16), then `done` with the whole message and its deviations, or `error`.
Every error is JSON: {"error": {"code", "message", ...}}.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from django.http import HttpRequest, JsonResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from lab import untrusted_json
from lab.analyses import engine, parsing
from lab.analyses.exports import BAD_REQUEST, CONFLICT, json_error
from lab.analyses.models import Analysis

NOT_FOUND = 404
DEFAULT_CHUNK = 16
MAX_OUTPUT_CHARS = 1_000_000


class BadParseRequest(ValueError):
    """The request body cannot be used; the message says which field and why."""


@csrf_exempt  # a JSON API for scripts: no cookies are read, so no CSRF token is needed
@require_POST
def parse_output(request: HttpRequest, pk: int) -> HttpResponseBase:
    """Parse the posted output; answer the message (or an SSE stream of deltas)."""
    analysis = Analysis.objects.filter(pk=pk).first()
    if analysis is None or analysis.status != Analysis.Status.DONE:
        return json_error(NOT_FOUND, "not_found", f"no finished analysis with id {pk}")
    try:
        body = read_body(request.body)
        options = parsing.options_from_dict(body.get("options") or {}, parsing.ParserOptions())
    except BadParseRequest as exc:
        return json_error(BAD_REQUEST, "bad_request", str(exc))
    if body.get("stream"):
        return event_stream(analysis.result_json, options, body)
    return parse_once(analysis.result_json, options, body)


def read_body(raw: bytes) -> dict[str, Any]:
    """Check the body's fields: output a string, options an object, chunk a positive int."""
    try:
        body = untrusted_json.loads(raw or b"{}")
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadParseRequest(f"body: expected JSON; found invalid JSON ({exc})") from exc
    if not isinstance(body, dict):
        raise BadParseRequest("body: expected a JSON object with \"output\"")
    output = body.get("output")
    if not isinstance(output, str):
        raise BadParseRequest("output: expected the model's output as a string")
    if len(output) > MAX_OUTPUT_CHARS:
        raise BadParseRequest(f"output: expected at most {MAX_OUTPUT_CHARS} characters; "
                              f"found {len(output)}")
    if body.get("options") is not None and not isinstance(body["options"], dict):
        raise BadParseRequest("options: expected a JSON object")
    chunk = body.get("chunk", DEFAULT_CHUNK)
    if not isinstance(chunk, int) or isinstance(chunk, bool) or chunk < 1:
        raise BadParseRequest(f"chunk: expected a positive integer; found {chunk!r}")
    return body


def parse_once(result_json: str, options: parsing.ParserOptions,
               body: dict[str, Any]) -> JsonResponse:
    try:
        report = parsing.parse_report(result_json, options, body["output"],
                                      partial=bool(body.get("partial")))
    except engine.AnalyzerError as exc:
        return JsonResponse({"error": parsing.error_payload(exc)}, status=CONFLICT)
    return JsonResponse(report)


def event_stream(result_json: str, options: parsing.ParserOptions,
                 body: dict[str, Any]) -> StreamingHttpResponse:
    events = parsing.stream_events(result_json, options, body["output"],
                                   body.get("chunk", DEFAULT_CHUNK))
    response = StreamingHttpResponse(sse(events), content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    return response


def sse(events: Iterator[dict[str, Any]]) -> Iterator[bytes]:
    """Write each event as `event: TYPE` and one `data:` line of JSON."""
    try:
        for event in events:
            kind = event.pop("type")
            yield f"event: {kind}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n".encode()
    except engine.AnalyzerError as exc:  # no parser could be generated
        payload = json.dumps({"error": parsing.error_payload(exc)}, ensure_ascii=False)
        yield f"event: error\ndata: {payload}\n\n".encode()
