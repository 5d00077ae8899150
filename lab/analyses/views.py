"""Pages: bring a template in, watch its analysis, read the result, and their JSON twins.

htmx requests get a named partial of the same page template. Status codes for htmx are decided
once (see base.html's htmx-config): 2xx and 422 (invalid form) swap, other errors do not.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import partial
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect
from django_htmx.middleware import HtmxDetails

from lab.analyses import (
    api,
    brief_wait,
    comparing,
    engine,
    hub,
    intake,
    page_cache,
    parsing,
    playground,
    samples,
    serving,
    source_view,
)
from lab.analyses.forms import (
    CompareForm,
    HubForm,
    ParserOptionsForm,
    PasteForm,
    RenderSideForm,
    UploadForm,
    UploadPickForm,
    refused,
)
from lab.analyses.hub import HubFetchError
from lab.analyses.models import Analysis, Template
from lab.analyses.presenters import build_result_view

UNPROCESSABLE = 422


class HtmxHttpRequest(HttpRequest):
    """A request that went through django-htmx's middleware."""

    htmx: HtmxDetails


@require_GET
def home(request: HtmxHttpRequest) -> HttpResponse:
    """Show the three ways in and the latest analyses."""
    return _home(request, {})


# The partial each form is re-rendered in; the picker takes the upload form's place.
FORM_PARTIALS = {
    "paste": "paste-form",
    "upload": "upload-form",
    "upload_pick": "upload-form",
    "hub": "hub-form",
}


def _home(
    request: HtmxHttpRequest, forms_: dict[str, forms.Form], status: int = 200
) -> HttpResponse:
    context = {
        "paste_form": forms_.get("paste", PasteForm()),
        "upload_form": forms_.get("upload", UploadForm()),
        "upload_pick_form": forms_.get("upload_pick"),
        "hub_form": forms_.get("hub", HubForm()),
        "recent": Analysis.objects.listed()[:15],
    }
    template = "analyses/home.html"
    if request.htmx and forms_:
        template += f"#{FORM_PARTIALS[next(iter(forms_))]}"
    return render(request, template, context, status=status)


def _go_to(request: HtmxHttpRequest, analysis: Analysis) -> HttpResponse:
    if analysis.is_pending:
        brief_wait.wait_briefly(analysis.pk, settings.LAB_SUBMIT_WAIT_SECONDS)
    if request.htmx:
        return HttpResponseClientRedirect(analysis.get_absolute_url())
    return redirect(analysis)


@csrf_exempt  # only to read the body first: _submit_paste checks the token
@require_POST
def submit_paste(request: HtmxHttpRequest) -> HttpResponse:
    """Analyse a pasted template, or say so when it is too large to even read."""
    try:
        request.POST  # noqa: B018 - read before the CSRF check, which would turn this into a 400
    except RequestDataTooBig:
        sent = int(request.META.get("CONTENT_LENGTH") or 0)
        return _home(request, {"paste": PasteForm.too_large(sent)}, UNPROCESSABLE)
    return _submit_paste(request)


@csrf_protect
def _submit_paste(request: HtmxHttpRequest) -> HttpResponse:
    form = PasteForm(request.POST)
    if form.is_valid():
        try:
            return _go_to(request, intake.ingest_paste(**form.cleaned_data))
        except engine.AnalyzerError as exc:
            form.add_error("source", str(exc))
    return _home(request, {"paste": form}, UNPROCESSABLE)


@require_POST
def submit_upload(request: HtmxHttpRequest) -> HttpResponse:
    """Store an uploaded template file; analyse it, or ask which of its templates to analyse."""
    form = UploadForm(request.POST, request.FILES)
    if form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            stored = intake.store_upload(upload.read(), upload.name)
        except engine.AnalyzerError as exc:
            form.add_error("file", str(exc))
        else:
            if len(stored.templates) == 1:
                return _go_to(request, intake.analyze_picked(stored, list(stored.names))[0])
            return _home(request, {"upload_pick": _pick_form(stored)})
    return _home(request, {"upload": form}, UNPROCESSABLE)


def _pick_form(stored: intake.StoredUpload, data: Any = None) -> UploadPickForm:
    return UploadPickForm(
        data,
        names=stored.names,
        filename=stored.filename,
        initial={"file_sha256": stored.file_sha256, "names": list(stored.names[:1])},
    )


@require_POST
def submit_upload_pick(request: HtmxHttpRequest) -> HttpResponse:
    """Analyse the named templates picked from an uploaded file; show the first one."""
    stored = intake.stored_upload(str(request.POST.get("file_sha256", "")))
    if stored is None:
        unknown = "That upload is no longer known: upload the file again."
        return _home(request, {"upload": refused(UploadForm({}), None, unknown)}, UNPROCESSABLE)
    form = _pick_form(stored, request.POST)
    if not form.is_valid():
        return _home(request, {"upload_pick": form}, UNPROCESSABLE)
    return _go_to(request, intake.analyze_picked(stored, form.cleaned_data["names"])[0])


@require_POST
def submit_hub(request: HtmxHttpRequest) -> HttpResponse:
    """Fetch a template from the Hub and analyse it."""
    form = HubForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            return _go_to(
                request,
                intake.ingest_from_hub(data["repo_id"], data["revision"], data["named_template"]),
            )
        except intake.TemplateChoiceNeeded as choice:
            form = HubForm(request.POST, names=choice.names)
            form.add_error(
                "named_template", f"This repo has {len(choice.names)} chat templates: pick one."
            )
        except (HubFetchError, engine.AnalyzerError) as exc:
            form.add_error(None, str(exc))
    return _home(request, {"hub": form}, UNPROCESSABLE)


def _template_or_404(ref: str) -> Template:
    """Find a template by its key, or by its source's sha256 (the oldest such template)."""
    found = Template.objects.filter(key=ref).first()
    found = found or Template.objects.filter(sha256=ref).order_by("pk").first()
    if found is None:
        raise Http404(f"no stored template {ref[:64]}")
    return found


@require_GET
def template_detail(request: HtmxHttpRequest, sha256: str) -> HttpResponse:
    """Show a stored template, where it came from, and its analyses."""
    template = _template_or_404(sha256)
    if request.GET.get("format") == "json":
        return JsonResponse(api.template_payload(template, request))
    context = {
        "template": template,
        "origins": template.origins.order_by("created_at"),
        "analyses": template.analyses.listed(),
        "siblings": api.sibling_templates(template),
        "current_version": engine.analyzer_version(),
        "source_html": source_view.highlighted_lines(template.source),
    }
    return render(request, "analyses/template.html", context)


@require_http_methods(["GET", "POST"])
def edit_template(request: HtmxHttpRequest, sha256: str) -> HttpResponse:
    """Show a stored template's source in a form; analyse the edited text as a new template."""
    template = _template_or_404(sha256)
    if request.method == "POST":
        form = PasteForm(request.POST)
        if form.is_valid():
            try:
                return _go_to(request, intake.ingest_edit(template, **form.cleaned_data))
            except engine.AnalyzerError as exc:
                form.add_error("source", str(exc))
        status = UNPROCESSABLE
    else:
        title = f"{template.display_name} (edited)"
        form = PasteForm(initial={"source": template.source, "title": title})
        status = 200
    context = {"template": template, "form": form}
    return render(request, "analyses/edit.html", context, status=status)


@require_POST
def analyze_again(request: HtmxHttpRequest, sha256: str) -> HttpResponse:
    """Run the template's analysis anew with the current analyzer (or show the running one)."""
    template = _template_or_404(sha256)
    return _go_to(request, intake.analyze_again(template))


@require_GET
def analysis_detail(request: HtmxHttpRequest, pk: int) -> HttpResponseBase:
    """Show an analysis; while it runs, htmx polls this view for the body partial."""
    page = "format" not in request.GET and not request.htmx
    cached = page_cache.cached_response(request, pk) if page else None
    if cached is not None:
        return cached
    # The result JSON (up to megabytes) is read only to render.
    analysis = get_object_or_404(Analysis.objects.listed(), pk=pk)
    if request.GET.get("format") == "json":
        return JsonResponse(api.analysis_payload(_with_result(analysis), request))
    template = "analyses/analysis.html"
    if request.htmx:
        template += "#analysis-body"
    elif page_cache.is_immutable(analysis) and page_cache.is_navigation(request):
        parts = partial(_page_parts, request, _with_result(analysis))
        return page_cache.stream_and_store(request, analysis, parts)
    elif page_cache.is_immutable(analysis):
        render_page = partial(_render_analysis, request, template, analysis)
        return page_cache.render_and_store(request, analysis, render_page)
    return _render_analysis(request, template, analysis)


REST_MARK = "<!--lab:rest-of-the-page-->"


def _page_parts(request: HttpRequest, analysis: Analysis, extra: dict[str, Any]) -> Iterator[str]:
    """A finished analysis' page in three parts, each rendered when asked for: down to the
    summary, the rest (most of the rendering time and of the bytes), the closing tags."""
    result = analysis.result
    top = {**_top_context(analysis, result), **extra}
    marked = {**top, "rest_follows": mark_safe(REST_MARK)}  # noqa: S308 - our own constant
    head, tail = render_to_string("analyses/analysis.html", marked, request).split(REST_MARK)
    yield head
    rest = {**top, **_rest_context(analysis, result)}
    yield render_to_string("analyses/analysis.html#result-rest", rest, request)
    yield tail


def _with_result(analysis: Analysis) -> Analysis:
    return Analysis.objects.select_related("template").get(pk=analysis.pk)


def _render_analysis(
    request: HttpRequest, template: str, analysis: Analysis, extra: dict[str, Any] | None = None
) -> HttpResponse:
    context = _analysis_context(_with_result(analysis))
    return render(request, template, {**context, **(extra or {})})


def _analysis_context(analysis: Analysis) -> dict[str, Any]:
    result = analysis.result
    return {**_top_context(analysis, result), **_rest_context(analysis, result)}


def _top_context(analysis: Analysis, result: dict[str, Any] | None) -> dict[str, Any]:
    """What the page shows down to the summary."""
    context: dict[str, Any] = {
        "analysis": analysis,
        "template": analysis.template,
        "siblings": _sibling_links(analysis.template),
    }
    if result is not None:
        context["view"] = build_result_view(result)
    return context


def _rest_context(analysis: Analysis, result: dict[str, Any] | None) -> dict[str, Any]:
    """What the page shows below the summary: serve card, pairs, parser, live box, source."""
    context: dict[str, Any] = {}
    if not analysis.is_pending:
        context.update(_source_context(analysis.template.source, analysis.error))
    if result is not None:
        sample = samples.sample_for(analysis)
        context.update(
            options_form=ParserOptionsForm.from_options(sample.options()),
            parser=parsing.generate(analysis.result_json, sample.options()),
            options_query=_options_query(sample.options()),
            sample=sample.text,
            playground_forms=_playground_forms(result),
            serve=serving.serve_card(analysis.template, analysis.result_json),
        )
    return context


def _source_context(source: str, error: str) -> dict[str, Any]:
    """The highlighted source, and the error with its line mentions linked to the source."""
    lines = source.count("\n") + (0 if source.endswith("\n") else 1)
    return {
        "source_html": source_view.highlighted_lines(source),
        "source_lines": lines,
        "error_html": source_view.linked_error(error, lines),
    }


def _sibling_links(template: Template) -> list[tuple[str, str]]:
    """Name and link of each other template from the same file: its latest analysis, if any."""
    links = []
    for name, sibling in api.sibling_templates(template):
        latest = sibling.analyses.listed().first()
        links.append((name, (latest or sibling).get_absolute_url()))
    return links


@require_POST
def parser_panel(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """Regenerate parser and grammar for edited request options."""
    analysis = get_object_or_404(Analysis, pk=pk, status=Analysis.Status.DONE)
    form = ParserOptionsForm(request.POST)
    status = 200
    parser = None
    options_query = ""
    if form.is_valid():
        parser = parsing.generate(analysis.result_json, form.options())
        options_query = _options_query(form.options())
    else:
        status = UNPROCESSABLE
    context = {
        "analysis": analysis,
        "options_form": form,
        "parser": parser,
        "options_query": options_query,
    }
    return render(request, "analyses/analysis.html#parser-panel", context, status=status)


@require_GET
def render_playground(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """Render any conversation through the template, or two side by side with their diff.

    The inputs travel in the query string, so the page's URL is their permalink.
    """
    analysis = get_object_or_404(
        Analysis.objects.select_related("template"), pk=pk, status=Analysis.Status.DONE
    )
    result = analysis.result or {}
    bound = "a-messages" in request.GET
    compare = request.GET.get("compare") == "1" or not bound
    side_forms = _playground_forms(result, request.GET if bound else None)
    context: dict[str, Any] = {
        "analysis": analysis,
        "template": analysis.template,
        "side_forms": side_forms,
        "compare": compare,
        "kwargs_read": _kwargs_read(result),
        "played": _play(analysis, side_forms, compare) if bound else None,
    }
    status = 200 if not bound or context["played"] else UNPROCESSABLE
    return render(request, "analyses/playground.html", context, status=status)


def _kwargs_read(result: dict[str, Any]) -> tuple[str, ...]:
    return tuple((result.get("caps") or {}).get("template_kwargs") or ())


def _playground_forms(result: dict[str, Any], data: Any = None) -> dict[str, RenderSideForm]:
    """The playground's two sides, bound to the query or starting from an example."""
    kwargs_read = _kwargs_read(result)
    return {
        side: RenderSideForm(data, prefix=side, initial=_playground_initial(side, kwargs_read))
        for side in ("a", "b")
    }


def _playground_initial(side: str, kwargs_read: tuple[str, ...]) -> dict[str, Any]:
    """Start with a tool-call conversation: B turns thinking off, or sends string arguments."""
    messages = playground.DEFAULT_MESSAGES
    kwargs: dict[str, Any] = {}
    if "enable_thinking" in kwargs_read:
        kwargs = {"enable_thinking": side == "a"}
    elif side == "b":
        messages = playground.with_string_arguments(messages)
    return {
        "messages": playground.pretty(messages),
        "tools": playground.pretty(playground.DEFAULT_TOOLS),
        "kwargs": json.dumps(kwargs),
        "add_generation_prompt": True,
    }


def _play(
    analysis: Analysis, side_forms: dict[str, RenderSideForm], compare: bool
) -> playground.Playground | None:
    """Render the valid sides; None (errors on the forms) when a side cannot be rendered."""
    used = ("a", "b") if compare else ("a",)
    requests = {}
    for side in used:
        form = side_forms[side]
        if not form.is_valid():
            return None
        try:
            requests[side] = playground.build_request(form.cleaned_data)
        except engine.AnalyzerError as exc:
            form.add_error(None, str(exc))
            return None
    preserved = list((analysis.result or {}).get("preserved_tokens") or [])
    return playground.render(analysis.template, preserved, requests["a"], requests.get("b"))


@require_GET
def compare_view(request: HtmxHttpRequest) -> HttpResponse:
    """Compare two stored templates, or fetch two Hub revisions and redirect to their permalink.

    The permalink names both templates by id: ?a=<id>&b=<id>.
    """
    asked = any(request.GET.get(name) for name in ("b", "repo_id"))
    # ?a=<id> alone (the template page's link) prefills A and waits for B.
    form = CompareForm(request.GET) if asked else CompareForm(initial=request.GET.dict())
    context: dict[str, Any] = {"form": form, "recent": _recent_templates()}
    if not asked:
        return render(request, "analyses/compare.html", context)
    if not form.is_valid():
        return render(request, "analyses/compare.html", context, status=UNPROCESSABLE)
    data = form.cleaned_data
    try:
        if data["repo_id"] and not (data["a"] and data["b"]):
            if data["rev_a"] and data["rev_b"]:
                return _compare_hub_revisions(data["repo_id"], data["rev_a"], data["rev_b"])
            context["commits"] = _commit_links(data["repo_id"])
            return render(request, "analyses/compare.html", context)
        a, b = _template_or_404(data["a"]), _template_or_404(data["b"])
        context.update(a=a, b=b, view=comparing.compare(a, b))
    except Http404 as exc:
        form.add_error(None, str(exc))
        return render(request, "analyses/compare.html", context, status=404)
    except (HubFetchError, intake.TemplateChoiceNeeded, engine.AnalyzerError) as exc:
        form.add_error(None, str(exc))
        return render(request, "analyses/compare.html", context, status=UNPROCESSABLE)
    return render(request, "analyses/compare.html", context)


def _compare_hub_revisions(repo_id: str, rev_a: str, rev_b: str) -> HttpResponse:
    a = intake.ingest_from_hub(repo_id, rev_a).template
    b = intake.ingest_from_hub(repo_id, rev_b).template
    query = urlencode({"a": a.key or a.sha256, "b": b.key or b.sha256})
    return redirect(f"{reverse('compare')}?{query}")


def _commit_links(repo_id: str) -> list[tuple[hub.TemplateCommit, str]]:
    """The commits that changed the repo's template, each with the link comparing it with the
    change before it ("" for the oldest)."""
    commits = hub.template_commits(repo_id)
    links = []
    for newer, older in zip(commits, [*commits[1:], None], strict=True):
        query = ""
        if older is not None:
            revisions = {"rev_a": older.commit_sha, "rev_b": newer.commit_sha}
            query = urlencode({"repo_id": repo_id, **revisions})
        links.append((newer, query))
    return links


def _recent_templates() -> list[Template]:
    return list(Template.objects.order_by("-pk")[:20])


def _options_query(options: parsing.ParserOptions) -> str:
    """The download links' query: the options the grammar and parser were generated for."""
    return urlencode({"options": json.dumps(options.as_dict(), separators=(",", ":"))})


@require_GET
def api_analysis(request: HtmxHttpRequest, pk: int) -> JsonResponse:
    """Return an analysis as JSON: status, timings, links and the result."""
    analysis = get_object_or_404(Analysis.objects.select_related("template"), pk=pk)
    return JsonResponse(api.analysis_payload(analysis, request))


@require_GET
def api_analysis_result(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """Return the analyzer's canonical JSON byte for byte (404 until it is done)."""
    analysis = get_object_or_404(Analysis, pk=pk, status=Analysis.Status.DONE)
    return HttpResponse(analysis.result_json, content_type="application/json")


@require_GET
def api_template(request: HtmxHttpRequest, sha256: str) -> JsonResponse:
    """Return a stored template, its origins and its analyses as JSON."""
    template = _template_or_404(sha256)
    return JsonResponse(api.template_payload(template, request))
