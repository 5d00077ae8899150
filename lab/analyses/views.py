"""Pages: bring a template in, watch its analysis, read the result, and their JSON twins.

htmx requests get a named partial of the same page template. Status codes for htmx are decided
once (see base.html's htmx-config): 2xx and 422 (invalid form) swap, other errors do not.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from django import forms
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect
from django_htmx.middleware import HtmxDetails

from lab.analyses import api, engine, intake, page_cache, parsing, samples
from lab.analyses.forms import (
    HubForm,
    ParserOptionsForm,
    PasteForm,
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
            return _go_to(request, intake.ingest_paste(form.cleaned_data["source"]))
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


@require_GET
def template_detail(request: HtmxHttpRequest, sha256: str) -> HttpResponse:
    """Show a stored template, where it came from, and its analyses."""
    template = get_object_or_404(Template, sha256=sha256)
    if request.GET.get("format") == "json":
        return JsonResponse(api.template_payload(template, request))
    context = {
        "template": template,
        "origins": template.origins.order_by("created_at"),
        "analyses": template.analyses.listed(),
        "siblings": api.sibling_templates(template),
        "current_version": engine.analyzer_version(),
    }
    return render(request, "analyses/template.html", context)


@require_POST
def analyze_again(request: HtmxHttpRequest, sha256: str) -> HttpResponse:
    """Run the template's analysis anew with the current analyzer (or show the running one)."""
    template = get_object_or_404(Template, sha256=sha256)
    return _go_to(request, intake.analyze_again(template))


@require_GET
def analysis_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
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
    elif page_cache.is_immutable(analysis):
        render_page = partial(_render_analysis, request, template, analysis)
        return page_cache.render_and_store(request, analysis, render_page)
    return _render_analysis(request, template, analysis)


def _with_result(analysis: Analysis) -> Analysis:
    return Analysis.objects.select_related("template").get(pk=analysis.pk)


def _render_analysis(
    request: HttpRequest, template: str, analysis: Analysis, extra: dict[str, Any] | None = None
) -> HttpResponse:
    context = _analysis_context(_with_result(analysis))
    return render(request, template, {**context, **(extra or {})})


def _analysis_context(analysis: Analysis) -> dict[str, Any]:
    context: dict[str, Any] = {
        "analysis": analysis,
        "template": analysis.template,
        "siblings": _sibling_links(analysis.template),
    }
    result = analysis.result
    if result is not None:
        sample = samples.sample_for(analysis)
        context.update(
            view=build_result_view(result),
            options_form=ParserOptionsForm.from_options(sample.options()),
            parser=parsing.generate(analysis.result_json, sample.options()),
            sample=sample.text,
        )
    return context


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
    if form.is_valid():
        parser = parsing.generate(analysis.result_json, form.options())
    else:
        status = UNPROCESSABLE
    context = {"analysis": analysis, "options_form": form, "parser": parser}
    return render(request, "analyses/analysis.html#parser-panel", context, status=status)


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
    template = get_object_or_404(Template, sha256=sha256)
    return JsonResponse(api.template_payload(template, request))
