"""Finished analysis pages: rendered once per process, then served from the cache with an ETag.

A done analysis never changes (rows are never overwritten), so its page is the same bytes for
everyone except the CSRF token. The page is rendered with a placeholder token, kept in the
`pages` cache, and each request gets it with its own token put in. Browsers revalidate with
the ETag (304) or keep the page for a day (`private`: the page carries their token).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.cache import caches
from django.http import HttpRequest, HttpResponse, HttpResponseNotModified
from django.middleware.csrf import get_token
from django.utils.cache import patch_cache_control

from lab.analyses import engine
from lab.analyses.models import Analysis

TOKEN_PLACEHOLDER = "csrf-token-placeholder-0d6f1c"  # no real token looks like this
MAX_CACHED_BYTES = 2_000_000
CACHE_SECONDS = 86_400


def is_immutable(analysis: Analysis) -> bool:
    """Tell whether an analysis' page can no longer change (it is done)."""
    return analysis.status == Analysis.Status.DONE


def page_etag(analysis: Analysis) -> str:
    """Name this page's content: the analysis, its template and the code that renders it."""
    sha = analysis.template.sha256[:16]
    return f'W/"analysis-{analysis.pk}-{sha}-{engine.analyzer_version()}"'


def cached_response(request: HttpRequest, pk: int) -> HttpResponse | None:
    """Answer from the cache alone (no database query), or None if the page is not there."""
    stored = caches["pages"].get(_key(pk))
    if stored is None:
        return None
    etag, html = stored
    return _response(request, etag, html)


def render_and_store(
    request: HttpRequest, analysis: Analysis, render_page: Callable[[dict[str, Any]], HttpResponse]
) -> HttpResponse:
    """Render a finished analysis' page with a placeholder token, keep it, and answer."""
    etag = page_etag(analysis)
    html = render_page({"csrf_token": TOKEN_PLACEHOLDER}).content.decode()
    if len(html) <= MAX_CACHED_BYTES:
        caches["pages"].set(_key(analysis.pk), (etag, html), CACHE_SECONDS)
    return _response(request, etag, html)


def _key(pk: int) -> str:
    # Only finished pages are stored, so the id and the code's version name one page.
    return f"analysis-page:{pk}:{engine.analyzer_version()}"


def _response(request: HttpRequest, etag: str, html: str) -> HttpResponse:
    """Answer 304 for a known ETag, else the page with this request's CSRF token put in."""
    if etag in request.headers.get("If-None-Match", ""):
        response: HttpResponse = HttpResponseNotModified()
    else:
        response = HttpResponse(html.replace(TOKEN_PLACEHOLDER, get_token(request)))
    response["ETag"] = etag
    patch_cache_control(response, private=True, max_age=CACHE_SECONDS, immutable=True)
    return response
