"""Finished analysis pages: rendered once, served from the cache with each request's token."""

from __future__ import annotations

import re
import time
import warnings
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import caches
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from lab.analyses import engine, intake
from lab.analyses.models import Analysis, Template
from lab.analyses.tasks import run_analysis

pytestmark = pytest.mark.django_db

TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
ANY_TOKEN = re.compile(r'(csrfmiddlewaretoken" value="|"X-CSRFToken": ")[^"]+"')


@pytest.fixture
def done(corpus_templates: Path) -> Analysis:
    source = (corpus_templates / "Qwen-Qwen3-0.6B.jinja").read_text()
    analysis = intake.request_analysis(intake.store_template(engine.load_pasted(source)))
    run_analysis(analysis.pk)
    analysis.refresh_from_db()
    assert analysis.status == Analysis.Status.DONE
    return analysis


def test_a_done_page_is_rendered_once_then_served_without_reading_the_result(
    done: Analysis, client: Client, settings: Any
) -> None:
    # Long enough for a first render on a loaded machine (the check is noted before it).
    settings.LAB_PAGE_RECHECK_SECONDS = 1.0
    first = client.get(done.get_absolute_url())
    with CaptureQueriesContext(connection) as queries:
        second = client.get(done.get_absolute_url())
    assert queries.captured_queries == []  # the row was checked moments ago
    time.sleep(1.1)
    with CaptureQueriesContext(connection) as queries:
        third = client.get(done.get_absolute_url())
    assert first.status_code == second.status_code == third.status_code == 200
    [query] = queries.captured_queries  # status, creation time and template hash only
    assert "result_json" not in query["sql"] and '"source"' not in query["sql"]
    assert ANY_TOKEN.sub("", first.content.decode()) == ANY_TOKEN.sub("", second.content.decode())
    assert ANY_TOKEN.sub("", third.content.decode()) == ANY_TOKEN.sub("", second.content.decode())
    assert b"csrf-token-placeholder" not in second.content


def test_each_visitor_gets_a_token_that_passes_the_csrf_check(done: Analysis) -> None:
    for _ in range(2):  # the first renders the page, the second reads it from the cache
        visitor = Client(enforce_csrf_checks=True)
        page = visitor.get(done.get_absolute_url()).content.decode()
        token = TOKEN.search(page)
        assert token is not None
        form = {"tools": "[]", "reasoning_format": "auto", "csrfmiddlewaretoken": token.group(1)}
        assert visitor.post(f"/a/{done.pk}/parser/", form).status_code == 200


def test_a_done_page_carries_an_etag_and_answers_304_for_it(done: Analysis, client: Client) -> None:
    page = client.get(done.get_absolute_url())
    assert page["ETag"].startswith(f'W/"analysis-{done.pk}-{done.created_at.timestamp():.6f}-')
    for directive in ("private", "immutable", "max-age=86400"):
        assert directive in page["Cache-Control"]
    again = client.get(done.get_absolute_url(), HTTP_IF_NONE_MATCH=page["ETag"])
    assert again.status_code == 304 and again.content == b""


def test_a_pending_page_is_neither_cached_nor_tagged(client: Client) -> None:
    template = Template.objects.create(sha256="b" * 64, source="x")
    analysis = Analysis.objects.create(template=template, analyzer_version="v", options_key="k")
    page = client.get(analysis.get_absolute_url())
    assert page.status_code == 200 and not page.has_header("ETag")
    assert not caches["pages"]._cache  # type: ignore[attr-defined]  # LocMemCache's dict


def test_the_page_cache_is_its_own_bounded_cache(settings: Any) -> None:
    assert settings.CACHES["pages"]["OPTIONS"]["MAX_ENTRIES"] == 200


def test_a_new_row_with_a_reused_id_gets_its_own_page(
    done: Analysis, client: Client, settings: Any
) -> None:
    settings.LAB_PAGE_RECHECK_SECONDS = 0  # check the row on every request
    first = client.get(done.get_absolute_url())
    Analysis.objects.filter(pk=done.pk).update(created_at=done.created_at.replace(year=2030))
    second = client.get(done.get_absolute_url())
    assert first["ETag"] != second["ETag"]


def test_a_new_origin_of_the_template_gets_a_new_page(
    done: Analysis, client: Client, settings: Any
) -> None:
    settings.LAB_PAGE_RECHECK_SECONDS = 0.2
    first = client.get(done.get_absolute_url())
    intake.record_origin(done.template, "upload", filename="tokenizer_config.json")
    time.sleep(0.3)  # the next recheck of the row
    second = client.get(done.get_absolute_url())
    assert first["ETag"] != second["ETag"]
    assert "tokenizer_config.json" in second.content.decode()


NAVIGATION = {"Sec-Fetch-Mode": "navigate"}  # what a browser sends when it loads a page to show


def _streamed(client: Client, url: str) -> tuple[list[str], Any]:
    response = client.get(url, headers=NAVIGATION)
    assert response.status_code == 200 and response.streaming
    with warnings.catch_warnings():  # the test client reads the ASGI server's async parts
        warnings.simplefilter("ignore")
        return [bytes(chunk).decode() for chunk in response], response  # each part as sent


def test_a_browser_gets_the_summary_before_the_rest_and_the_same_page_as_in_one_piece(
    done: Analysis,
) -> None:
    url = done.get_absolute_url()
    whole = Client().get(url).content.decode()  # rendered in one piece (no navigation header)
    caches["pages"].clear()
    visitor = Client(enforce_csrf_checks=True)
    parts, response = _streamed(visitor, url)
    head, rest, tail = parts
    assert 'id="summary"' in head and 'id="variant-pairs"' not in head
    assert 'id="variant-pairs"' in rest and 'id="parser-panel"' in rest and 'id="live"' in rest
    assert tail.rstrip().endswith("</html>")
    assert ANY_TOKEN.sub("", "".join(parts)) == ANY_TOKEN.sub("", whole)
    assert response["ETag"].startswith(f'W/"analysis-{done.pk}-') and "immutable" in response[
        "Cache-Control"
    ]
    token = TOKEN.search("".join(parts))  # the streamed page's token passes the CSRF check
    assert token is not None
    form = {"tools": "[]", "reasoning_format": "auto", "csrfmiddlewaretoken": token.group(1)}
    assert visitor.post(f"/a/{done.pk}/parser/", form).status_code == 200
    again = visitor.get(url, headers=NAVIGATION)  # kept once sent: served whole from the cache
    assert not again.streaming and ANY_TOKEN.sub("", again.content.decode()) == ANY_TOKEN.sub(
        "", whole
    )


def test_a_part_that_fails_to_render_says_so_in_the_page_and_is_not_kept(
    done: Analysis, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lab.analyses import views

    def broken(*args: object) -> dict[str, Any]:
        raise RuntimeError("a bug below the summary")

    monkeypatch.setattr(views, "_rest_context", broken)
    caches["pages"].clear()
    head, notice = _streamed(client, done.get_absolute_url())[0]
    assert 'id="summary"' in head
    assert 'id="page-error"' in notice and "failed to render" in notice
    assert client.get(done.get_absolute_url(), headers=NAVIGATION).streaming  # rendered anew
