"""Response headers every page gets."""

from __future__ import annotations

from collections.abc import Callable

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse

# Defence in depth behind escaping: no inline script, no foreign origins. htmx adds inline
# indicator styles, hence 'unsafe-inline' for styles only.
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
        "form-action 'self'",
    ]
)


class ContentSecurityPolicyMiddleware:
    """Add a Content-Security-Policy header unless the view set its own."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        return response


def wants_json(request: HttpRequest) -> bool:
    """Whether the request asked a JSON endpoint (an /api/ path, or ?format=json)."""
    return "/api/" in request.path or request.GET.get("format") == "json"


class JsonErrorsMiddleware:
    """Answer errors of JSON endpoints in JSON: scripts get {"error": ...}, not an HTML page."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        is_json = response.get("Content-Type", "").startswith("application/json")
        if response.status_code < 400 or is_json or not wants_json(request):
            return response
        replaced = json_error(request, response.status_code, response.reason_phrase)
        if response.has_header("Allow"):  # 405 says which methods would do
            replaced["Allow"] = response["Allow"]
        return replaced

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        """Keep a view's "not found" message (which row is missing) in the JSON answer."""
        if isinstance(exception, Http404) and wants_json(request):
            return json_error(request, 404, str(exception) or "Not Found")
        return None


def json_error(request: HttpRequest, status: int, message: str) -> JsonResponse:
    """The JSON body of an error: its status, a message, and the path asked for."""
    body = {"error": {"status": status, "message": message}, "path": request.path}
    return JsonResponse(body, status=status)
