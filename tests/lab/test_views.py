"""Pages and their JSON twins, through Django's test client (Celery runs tasks inline)."""

from __future__ import annotations

import hashlib
import html
import json
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone

from lab.analyses import engine, intake
from lab.analyses.models import Analysis, Template, TemplateOrigin

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
FORM_ENCODED = "application/x-www-form-urlencoded"


@pytest.fixture
def qwen3(corpus_templates: Path) -> str:
    return (corpus_templates / "Qwen-Qwen3-0.6B.jinja").read_text()


@pytest.fixture
def submit(client: Client, django_capture_on_commit_callbacks: Any) -> Callable[..., Any]:
    """POST a form and run what was queued on commit (the Celery task, inline)."""

    def post(url: str, data: dict[str, Any], **extra: Any) -> Any:
        with django_capture_on_commit_callbacks(execute=True):
            return client.post(url, data, **extra)

    return post


def test_home_offers_paste_upload_and_hub_forms_each_with_a_csrf_token(client: Client) -> None:
    page = client.get("/").content.decode()
    for form_id in ("paste-form", "upload-form", "hub-form"):
        assert f'id="{form_id}"' in page
    assert page.count('name="csrfmiddlewaretoken"') == 3
    assert 'hx-headers=\'{"X-CSRFToken": ' in page


def test_pages_carry_a_content_security_policy(client: Client) -> None:
    assert "script-src 'self'" in client.get("/")["Content-Security-Policy"]


def test_forms_refuse_posts_without_csrf_token() -> None:
    strict = Client(enforce_csrf_checks=True)
    assert strict.post("/new/paste/", {"source": "x"}).status_code == 403
    assert strict.post("/new/hub/", {"repo_id": "a/b"}).status_code == 403


def test_a_pasted_template_is_analyzed_and_its_page_shows_the_variant_pairs(
    submit: Callable[..., Any], client: Client, qwen3: str
) -> None:
    response = submit("/new/paste/", {"source": qwen3})
    analysis = Analysis.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/a/{analysis.pk}/"
    assert analysis.status == Analysis.Status.DONE
    page = client.get(f"/a/{analysis.pk}/").content.decode()
    assert 'id="variant-pairs"' in page and 'id="cmp-R1"' in page
    # Markers link to their place in the pair that produced them.
    assert 'href="#m0' in page and 'data-pair="cmp-' in page
    assert "&lt;think&gt;" in page
    assert "enable_thinking=false" in page and "closed" in page


def test_htmx_submissions_are_redirected_by_header(submit: Callable[..., Any], qwen3: str) -> None:
    response = submit("/new/paste/", {"source": qwen3}, **HTMX)
    assert response.status_code == 200
    assert response["HX-Redirect"] == f"/a/{Analysis.objects.get().pk}/"


def test_an_invalid_form_comes_back_as_its_partial_with_status_422(client: Client) -> None:
    response = client.post("/new/paste/", {"source": ""}, **HTMX)
    body = response.content.decode()
    assert response.status_code == 422
    assert body.lstrip().startswith('<form id="paste-form"') and "<html" not in body
    assert "This field is required." in body


def test_the_same_template_pasted_twice_reuses_template_and_analysis(
    submit: Callable[..., Any], qwen3: str
) -> None:
    first = submit("/new/paste/", {"source": qwen3})
    second = submit("/new/paste/", {"source": qwen3})
    assert first["Location"] == second["Location"]
    assert (Template.objects.count(), Analysis.objects.count()) == (1, 1)
    assert TemplateOrigin.objects.count() == 2


def test_an_upload_over_the_limit_is_refused_with_its_size(client: Client, settings: Any) -> None:
    settings.LAB_MAX_TEMPLATE_BYTES = 1000
    upload = SimpleUploadedFile("big.jinja", b"x" * 2500)
    response = client.post("/new/upload/", {"file": upload})
    assert response.status_code == 422
    assert (
        "The template is 2,500 bytes; the lab accepts at most 1,000 bytes"
        in response.content.decode()
    )
    assert not Template.objects.exists()


def test_an_uploaded_jinja_file_is_analyzed(submit: Callable[..., Any], qwen3: str) -> None:
    upload = SimpleUploadedFile("chat_template.jinja", qwen3.encode())
    response = submit("/new/upload/", {"file": upload})
    origin = TemplateOrigin.objects.get()
    assert response.status_code == 302
    assert (origin.kind, origin.filename) == ("upload", "chat_template.jinja")
    assert Analysis.objects.get().status == Analysis.Status.DONE


def test_an_uploaded_config_with_named_templates_keeps_every_one_and_asks_which_to_analyze(
    submit: Callable[..., Any], fake_hub: Any
) -> None:
    config = fake_hub.repos["tests/named"].files["tokenizer_config.json"]
    upload = SimpleUploadedFile("tokenizer_config.json", config)
    asked = submit("/new/upload/", {"file": upload}, **HTMX)
    body = asked.content.decode()
    names = sorted(TemplateOrigin.objects.values_list("template_name", flat=True))
    assert names == ["default", "tool_use"]
    default = Template.objects.get(origins__template_name="default")
    assert (default.bos_token, default.eos_token) == ("<BOS_TOKEN>", "<|END_OF_TURN_TOKEN|>")
    assert asked.status_code == 200 and body.lstrip().startswith('<form id="upload-form"')
    assert "holds 2 chat templates: pick the ones to analyse." in body
    # The default one is ticked, the other offered; nothing is analysed before the pick.
    assert re.search(r'<input type="checkbox" name="names" value="default"[^>]* checked', body)
    assert not re.search(r'value="tool_use"[^>]* checked', body)
    assert not Analysis.objects.exists()


@pytest.fixture
def named_upload(submit: Callable[..., Any], fake_hub: Any) -> str:
    """Upload the two-template config; return the file's sha256 the picker carries."""
    config = fake_hub.repos["tests/named"].files["tokenizer_config.json"]
    submit("/new/upload/", {"file": SimpleUploadedFile("tokenizer_config.json", config)})
    return hashlib.sha256(config).hexdigest()


def test_picking_one_named_template_analyzes_only_that_one(
    submit: Callable[..., Any], client: Client, named_upload: str
) -> None:
    picked = submit("/new/upload/pick/", {"file_sha256": named_upload, "names": ["tool_use"]})
    analysis = Analysis.objects.get()
    assert picked.status_code == 302 and picked["Location"] == analysis.get_absolute_url()
    assert analysis.template.origins.filter(template_name="tool_use").exists()
    assert analysis.status == Analysis.Status.DONE
    page = client.get(analysis.get_absolute_url()).content.decode()
    default = Template.objects.get(origins__template_name="default")
    assert f'<a href="{default.get_absolute_url()}">default</a>' in page  # not analysed yet


def test_picking_both_named_templates_analyzes_both_and_links_them(
    submit: Callable[..., Any], client: Client, named_upload: str
) -> None:
    both = {"file_sha256": named_upload, "names": ["default", "tool_use"]}
    picked = submit("/new/upload/pick/", both, **HTMX)
    first = Analysis.objects.get(template__origins__template_name="default")
    other = Analysis.objects.get(template__origins__template_name="tool_use")
    assert picked["HX-Redirect"] == first.get_absolute_url()
    page = client.get(first.get_absolute_url()).content.decode()
    assert f'<a href="{other.get_absolute_url()}">tool_use</a>' in page


def test_picking_nothing_or_an_unknown_upload_is_explained(
    client: Client, named_upload: str
) -> None:
    nothing = client.post("/new/upload/pick/", {"file_sha256": named_upload}, **HTMX)
    assert nothing.status_code == 422
    assert "Pick at least one template to analyse." in nothing.content.decode()
    unknown = client.post("/new/upload/pick/", {"file_sha256": "0" * 64, "names": ["x"]}, **HTMX)
    assert unknown.status_code == 422
    assert "That upload is no longer known: upload the file again." in unknown.content.decode()
    assert "This field is required." not in unknown.content.decode()
    assert not Analysis.objects.exists()


def test_a_hub_fetch_records_the_resolved_commit(submit: Callable[..., Any], hub_env: Any) -> None:
    response = submit("/new/hub/", {"repo_id": "corpus/Qwen-Qwen3-0.6B", "revision": "main"})
    origin = TemplateOrigin.objects.get()
    assert response.status_code == 302
    assert origin.commit_sha == hub_env.repos["corpus/Qwen-Qwen3-0.6B"].sha
    assert (origin.kind, origin.repo_id, origin.revision) == (
        "hub",
        "corpus/Qwen-Qwen3-0.6B",
        "main",
    )
    assert Analysis.objects.get().status == Analysis.Status.DONE


@pytest.mark.parametrize(
    ("repo_id", "revision", "message"),
    [
        ("nobody/nothing", "", "Repository nobody/nothing was not found"),
        ("tests/no-template", "", "has no chat template file"),
        ("tests/gated", "", "tests/gated is gated"),
        ("tests/private", "", "refused access to tests/private"),
        ("corpus/Qwen-Qwen3-0.6B", "nope", "Revision &#x27;nope&#x27; does not exist"),
        ("tests/slow", "", "did not answer within 1 s"),
    ],
)
def test_hub_failures_are_explained_on_the_form(
    client: Client, hub_env: Any, repo_id: str, revision: str, message: str
) -> None:
    response = client.post("/new/hub/", {"repo_id": repo_id, "revision": revision}, **HTMX)
    assert response.status_code == 422
    assert message in response.content.decode()
    assert not Template.objects.exists()


def test_a_hub_repo_with_several_named_templates_asks_which_one(
    submit: Callable[..., Any], hub_env: Any
) -> None:
    asked = submit("/new/hub/", {"repo_id": "tests/named"}, **HTMX)
    body = asked.content.decode()
    assert asked.status_code == 422
    assert "This repo has 2 chat templates: pick one." in body
    assert '<option value="tool_use">' in body
    picked = submit("/new/hub/", {"repo_id": "tests/named", "named_template": "tool_use"})
    assert picked.status_code == 302
    assert TemplateOrigin.objects.get().template_name == "tool_use"


def test_a_hub_repo_with_additional_template_files_offers_them_by_name(
    submit: Callable[..., Any], hub_env: Any, corpus_templates: Path
) -> None:
    asked = submit("/new/hub/", {"repo_id": "tests/named-files"}, **HTMX)
    assert asked.status_code == 422
    assert '<option value="default">' in asked.content.decode()
    submit("/new/hub/", {"repo_id": "tests/named-files", "named_template": "tool_use"})
    template = Template.objects.get()
    hermes = corpus_templates / "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja"
    assert template.source == hermes.read_text()
    assert (template.template_name, template.eos_token) == ("tool_use", "<|im_end|>")
    origin = TemplateOrigin.objects.get()
    assert origin.filename == "additional_chat_templates/tool_use.jinja"
    missing = submit("/new/hub/", {"repo_id": "tests/named-files", "named_template": "nope"})
    assert "has no chat template named &#x27;nope&#x27;" in missing.content.decode()


def test_a_failed_analysis_shows_its_error_and_keeps_the_template(
    submit: Callable[..., Any], client: Client
) -> None:
    submit("/new/paste/", {"source": "{% if %}"})
    analysis = Analysis.objects.get()
    page = client.get(analysis.get_absolute_url()).content.decode()
    assert analysis.status == Analysis.Status.FAILED
    assert 'id="analysis-error"' in page
    # The error links to its line in the source shown on the same page.
    assert 'syntax error at <a class="line-link" href="#L-1">line 1</a>' in page
    assert '<span class="line" id="L-1">' in page
    source_page = client.get(analysis.template.get_absolute_url()).content.decode()
    assert '<span class="line" id="L-1"><span class="cp">{%</span>' in source_page


def test_a_pending_analysis_listens_for_its_status_and_serves_its_body_partial(
    client: Client,
) -> None:
    template = Template.objects.create(sha256="a" * 64, source="x")
    analysis = Analysis.objects.create(
        template=template, analyzer_version="v", options_key="k", enqueued_at=timezone.now()
    )
    page = client.get(analysis.get_absolute_url()).content.decode()
    assert f'data-status-socket="/ws/a/{analysis.pk}/status/"' in page
    assert "hx-trigger" not in page.split('id="analysis-body"')[1].split(">")[0]  # no polling
    partial = client.get(analysis.get_absolute_url(), **HTMX).content.decode()
    assert partial.lstrip().startswith('<div id="analysis-body"') and "<html" not in partial
    assert "waiting for a worker" in partial


def test_an_analysis_the_broker_never_took_says_it_starts_when_the_queue_is_back(
    client: Client,
) -> None:
    template = Template.objects.create(sha256="b" * 64, source="x")
    analysis = Analysis.objects.create(template=template, analyzer_version="v", options_key="k")
    page = client.get(analysis.get_absolute_url()).content.decode()
    assert "this analysis will start when the task queue is back" in page
    assert 'id="analyse-again"' in page


def test_json_views_describe_the_analysis_and_keep_the_canonical_bytes(
    submit: Callable[..., Any], client: Client, qwen3: str
) -> None:
    submit("/new/paste/", {"source": qwen3})
    analysis = Analysis.objects.get()
    inline = client.get(f"/a/{analysis.pk}/?format=json").json()
    api = client.get(f"/api/analyses/{analysis.pk}/").json()
    raw = client.get(f"/api/analyses/{analysis.pk}/result.json")
    assert inline == api
    assert api["status"] == "done" and api["template_sha256"] == analysis.template.sha256
    assert api["result"] == json.loads(analysis.result_json)
    assert raw.content.decode() == analysis.result_json
    assert api["result_url"].endswith(f"/api/analyses/{analysis.pk}/result.json")


def test_template_permalink_shows_source_origins_and_analyses(
    submit: Callable[..., Any], client: Client, qwen3: str
) -> None:
    submit("/new/paste/", {"source": qwen3})
    template = Template.objects.get()
    page = client.get(f"/t/{template.sha256}/").content.decode()
    assert template.sha256 in page and 'id="template-source"' in page
    data = client.get(f"/api/templates/{template.sha256}/").json()
    assert data["source"] == qwen3
    assert [o["kind"] for o in data["origins"]] == ["paste"]
    assert data["analyses"][0]["status"] == "done"
    assert client.get(f"/t/{template.sha256}/?format=json").json() == data


def test_analyse_again_queues_nothing_new_when_the_current_analysis_exists(
    submit: Callable[..., Any], qwen3: str
) -> None:
    submit("/new/paste/", {"source": qwen3})
    template = Template.objects.get()
    response = submit(f"/t/{template.sha256}/analyze/", {})
    assert response["Location"] == Analysis.objects.get().get_absolute_url()


def test_unknown_permalinks_are_not_found(client: Client) -> None:
    assert client.get("/a/999/").status_code == 404
    assert client.get(f"/t/{'f' * 64}/").status_code == 404
    assert client.get("/api/analyses/999/result.json").status_code == 404


def test_the_parser_panel_rejects_tools_that_are_not_json(
    submit: Callable[..., Any], client: Client, qwen3: str
) -> None:
    submit("/new/paste/", {"source": qwen3})
    url = f"/a/{Analysis.objects.get().pk}/parser/"
    response = client.post(url, {"tools": "[{oops", "reasoning_format": "auto"}, **HTMX)
    assert response.status_code == 422
    assert "Tools must be a JSON array of tool definitions" in response.content.decode()


def test_the_parser_panel_regenerates_for_tool_choice_and_a_response_schema(
    submit: Callable[..., Any], client: Client, qwen3: str
) -> None:
    submit("/new/paste/", {"source": qwen3})
    url = f"/a/{Analysis.objects.get().pk}/parser/"
    tools = json.dumps([{"type": "function", "function": {"name": "get_weather"}}])
    base = {"tools": tools, "reasoning_format": "auto"}
    auto = client.post(url, base, **HTMX).content.decode()
    assert "lazy grammar" in auto
    required = client.post(url, {**base, "tool_choice": "required"}, **HTMX).content.decode()
    assert "lazy grammar" not in required and "get-weather" in required
    schema = json.dumps({"type": "object", "properties": {"mood": {"enum": ["calm"]}}})
    formatted = client.post(url, {**base, "json_schema": schema}, **HTMX).content.decode()
    # The grammar quotes the enum value as a JSON string (the form's echo has no backslashes).
    assert "\\&quot;calm\\&quot;" in formatted and "get-weather" not in formatted
    bad = client.post(url, {**base, "json_schema": "[1, 2]"}, **HTMX)
    assert bad.status_code == 422
    assert "The schema must be a JSON object" in bad.content.decode()


@pytest.mark.parametrize("extra", [{}, HTMX], ids=["page", "htmx"])
def test_a_paste_too_large_to_read_gets_the_size_message_not_a_bare_400(
    client: Client, settings: Any, extra: dict[str, str]
) -> None:
    settings.LAB_MAX_TEMPLATE_BYTES = 1000
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 4000  # Django refuses to read bodies over this
    form = urlencode({"source": "x" * 5000})  # as a browser sends a textarea: "source=xxx..."
    response = client.post("/new/paste/", form, content_type=FORM_ENCODED, **extra)
    body = response.content.decode()
    assert response.status_code == 422
    assert "The pasted template is too large (the form sent 5,007 bytes)" in body
    assert "the lab accepts at most 1,000 bytes (0.001 MB)" in body
    assert "This field is required." not in body
    assert not Template.objects.exists()


def test_a_paste_too_large_to_read_still_needs_no_csrf_token_to_be_refused(
    settings: Any,
) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100
    strict = Client(enforce_csrf_checks=True)
    refused = strict.post("/new/paste/", {"source": "x" * 500})
    assert refused.status_code == 422 and "too large" in refused.content.decode()
    assert strict.post("/new/paste/", {"source": "x"}).status_code == 403


def _selects(queries: Any) -> list[str]:
    return [q["sql"] for q in queries.captured_queries if q["sql"].lstrip().startswith("SELECT")]


@pytest.mark.parametrize("page", ["home", "template", "template-json"])
def test_list_views_never_load_result_json(
    submit: Callable[..., Any], client: Client, qwen3: str, page: str
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    submit("/new/paste/", {"source": qwen3})
    sha = Template.objects.get().sha256
    url = {"home": "/", "template": f"/t/{sha}/", "template-json": f"/api/templates/{sha}/"}[page]
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    table = Analysis._meta.db_table
    analysis_reads = [sql for sql in _selects(queries) if f'FROM "{table}"' in sql]
    assert analysis_reads, "the page lists analyses"
    assert not [sql for sql in analysis_reads if "result_json" in sql]


def test_a_template_longer_than_the_analyzer_accepts_is_refused_on_the_form(
    client: Client,
) -> None:
    response = client.post("/new/paste/", {"source": "x" * 100_001})
    assert response.status_code == 422
    assert "the template is 100,001 characters; the limit is 100,000" in (
        response.content.decode()
    )
    assert not Template.objects.exists()


def test_the_page_of_a_render_of_thousands_of_newlines_stays_small(
    submit: Callable[..., Any], client: Client
) -> None:
    bomb = (
        "{{ '\\n' * 30000 }}{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}"
        "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    submit("/new/paste/", {"source": bomb})
    analysis = Analysis.objects.get()
    assert analysis.status == Analysis.Status.DONE
    assert len(analysis.result_json) < 5_000_000
    page = client.get(analysis.get_absolute_url()).content
    assert b"more characters are not shown: the whole render is in" in page
    assert len(page) < 5_000_000


def test_edit_prefills_the_source_and_analyses_the_edit_as_a_new_template(
    submit: Callable[..., Any], client: Client
) -> None:
    source = "{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}"
    parent = intake.store_template(
        replace(engine.load_pasted(source), bos_token="<s>", eos_token="</s>")
    )
    form = client.get(f"/t/{parent.key}/edit/").content.decode()
    assert html.escape(source, quote=False) in form
    response = submit(f"/t/{parent.key}/edit/", {"source": source + "!", "title": "mine"})
    assert response.status_code == 302
    edited = Template.objects.exclude(pk=parent.pk).get()
    assert (edited.bos_token, edited.eos_token, edited.display_name) == ("<s>", "</s>", "mine")
    origin = edited.origins.get()
    assert (origin.kind, origin.parent_id) == ("edit", parent.pk)
    assert response["Location"] == edited.analyses.get().get_absolute_url()


def test_an_emptied_edit_stays_on_the_form_with_the_error(submit: Callable[..., Any]) -> None:
    parent = intake.store_template(engine.load_pasted("{{ messages }}"))
    response = submit(f"/t/{parent.key}/edit/", {"source": ""})
    assert response.status_code == 422
    assert "This field is required." in response.content.decode()
    assert Template.objects.count() == 1
