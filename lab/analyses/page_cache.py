"""Finished analysis pages: rendered once per process, then served from the cache with an ETag.

A done analysis never changes (rows are never overwritten), so its page is the same bytes for
everyone except the CSRF token. The page is rendered with a placeholder token, kept in the
`pages` cache, and each request gets it with its own token put in; a hit reads only the row's
status, creation time, template hash and the template's newest origin, and that at most every
LAB_PAGE_RECHECK_SECONDS (2 s) per process. Browsers revalidate with the ETag (304) or keep the
page for a day (`private`: the page carries their token).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import datetime
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.cache import caches
from django.db.models import OuterRef, Subquery
from django.http import HttpRequest, HttpResponse, HttpResponseNotModified, StreamingHttpResponse
from django.middleware.csrf import get_token
from django.utils.cache import patch_cache_control

from lab.analyses import engine
from lab.analyses.models import Analysis, TemplateOrigin

log = logging.getLogger(__name__)

TOKEN_PLACEHOLDER = "csrf-token-placeholder-0d6f1c"  # no real token looks like this
MAX_CACHED_BYTES = 2_000_000
CACHE_SECONDS = 86_400
PART_FAILED = '<p class="notice" id="page-error">Part of this page failed to render; reload it.</p>'


def is_immutable(analysis: Analysis) -> bool:
    """Tell whether an analysis' page can no longer change (it is done)."""
    return analysis.status == Analysis.Status.DONE


def page_etag(pk: int, created_at: datetime, template_sha256: str, last_origin: int | None) -> str:
    """Name one page: the analysis row (id and creation time: a database made anew reuses
    ids), its template, the template's newest origin (the page shows where it came from and
    the other templates of its files) and the code that renders it."""
    row = f"{pk}-{created_at.timestamp():.6f}-{template_sha256[:16]}-{last_origin or 0}"
    return f'W/"analysis-{row}-{engine.analyzer_version()}"'


def _page_row(pk: int) -> tuple[datetime, str, int | None] | None:
    """Read what names a done analysis' page: creation time, template hash, newest origin."""
    # A subquery, not Max(): an aggregate would GROUP BY every column, result JSON included.
    origins = TemplateOrigin.objects.filter(template=OuterRef("template")).order_by("-id")
    newest_origin = origins.values("id")[:1]
    row: tuple[datetime, str, int | None] | None = (
        Analysis.objects.filter(pk=pk, status=Analysis.Status.DONE)
        .annotate(last_origin=Subquery(newest_origin))
        .values_list("created_at", "template__sha256", "last_origin")
        .first()
    )
    return row


def current_etag(pk: int) -> str | None:
    """The ETag of a done analysis' page, read from the database at most every
    LAB_PAGE_RECHECK_SECONDS per process; None when the analysis is not done."""
    # The row check was half of a cached hit's cost: a query, and under ASGI a new database
    # connection per request (each request runs in its own thread). A burst of GETs of one
    # page now makes one query per process; a new origin shows that much later at most.
    recheck, key = settings.LAB_PAGE_RECHECK_SECONDS, f"etag-of:{pk}"
    etag: str | None = caches["pages"].get(key) if recheck > 0 else None
    if etag is None:
        row = _page_row(pk)
        if row is None:
            return None
        etag = page_etag(pk, *row)
        if recheck > 0:
            caches["pages"].set(key, etag, recheck)
    return etag


def cached_response(request: HttpRequest, pk: int) -> HttpResponse | None:
    """Answer a finished page from the cache (at most one small query, never the result
    JSON); None when the analysis is not done or its page is not cached."""
    etag = current_etag(pk)
    if etag is None:
        return None
    html = caches["pages"].get(etag)
    if html is None and etag not in request.headers.get("If-None-Match", ""):
        return None
    return _response(request, etag, html or "")


def render_and_store(
    request: HttpRequest, analysis: Analysis, render_page: Callable[[dict[str, Any]], HttpResponse]
) -> HttpResponse:
    """Render a finished analysis' page with a placeholder token, keep it, and answer."""
    row = _page_row(analysis.pk)
    if row is None:  # no longer done (cannot happen) or gone: render without keeping it
        return render_page({})
    etag = page_etag(analysis.pk, *row)
    html = render_page({"csrf_token": TOKEN_PLACEHOLDER}).content.decode()
    if len(html) <= MAX_CACHED_BYTES:
        caches["pages"].set(etag, html, CACHE_SECONDS)
    return _response(request, etag, html)


def is_navigation(request: HttpRequest) -> bool:
    """Whether a browser is loading the page to show it (not a script, a fetch or a test
    client): only a browser paints a page while the rest of it is still coming."""
    return request.headers.get("Sec-Fetch-Mode") == "navigate"


def stream_and_store(
    request: HttpRequest,
    analysis: Analysis,
    render_parts: Callable[[dict[str, Any]], Iterator[str]],
) -> HttpResponse | StreamingHttpResponse:
    """Send a finished analysis' page part by part as each is rendered (the browser shows the
    summary while the pairs, parser and source are still being rendered), then keep it."""
    row = _page_row(analysis.pk)
    if row is None:
        return HttpResponse("".join(render_parts({})))
    etag = page_etag(analysis.pk, *row)
    if etag in request.headers.get("If-None-Match", ""):
        return _response(request, etag, "")
    parts = render_parts({"csrf_token": TOKEN_PLACEHOLDER})
    response = StreamingHttpResponse(_sent_and_kept(parts, get_token(request), etag))
    response["ETag"] = etag
    patch_cache_control(response, private=True, max_age=CACHE_SECONDS, immutable=True)
    return response


async def _sent_and_kept(parts: Iterator[str], token: str, etag: str) -> AsyncIterator[str]:
    """Yield each part with the request's token put in; keep the page once all are sent.

    Asynchronous, so the ASGI server sends each part as it comes (a synchronous iterator is
    read whole first); each part renders in the request's thread (templates, database)."""
    kept: list[str] = []
    while True:
        try:
            part = await _next_part(parts)
        except Exception:  # noqa: BLE001 - the status line is sent: say it in the page instead
            log.exception("analysis page %s: a part failed to render", etag)
            yield PART_FAILED
            return
        if part is None:
            break
        kept.append(part)
        yield part.replace(TOKEN_PLACEHOLDER, token)
    html = "".join(kept)
    if len(html) <= MAX_CACHED_BYTES:
        await sync_to_async(caches["pages"].set)(etag, html, CACHE_SECONDS)


@sync_to_async(thread_sensitive=True)
def _next_part(parts: Iterator[str]) -> str | None:
    return next(parts, None)


def _response(request: HttpRequest, etag: str, html: str) -> HttpResponse:
    """Answer 304 for a known ETag, else the page with this request's CSRF token put in."""
    if etag in request.headers.get("If-None-Match", ""):
        response: HttpResponse = HttpResponseNotModified()
    else:
        response = HttpResponse(html.replace(TOKEN_PLACEHOLDER, get_token(request)))
    response["ETag"] = etag
    patch_cache_control(response, private=True, max_age=CACHE_SECONDS, immutable=True)
    return response
