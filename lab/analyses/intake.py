"""Store incoming templates once and queue analyses for them."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from django.db import IntegrityError, transaction

from lab.analyses import engine, hub, queueing, reconcile
from lab.analyses.models import Analysis, Template, TemplateOrigin, options_key, template_key


def store_template(loaded: engine.TemplateSource) -> Template:
    """Return the stored row for this (source, bos, eos), creating it the first time."""
    key = template_key(loaded.sha256, loaded.source, loaded.bos_token, loaded.eos_token)
    defaults = {
        "sha256": loaded.sha256,
        "source": loaded.source,
        "bos_token": loaded.bos_token,
        "eos_token": loaded.eos_token,
        "template_name": loaded.name,
    }
    try:
        with transaction.atomic():
            template, _ = Template.objects.get_or_create(key=key, defaults=defaults)
    except IntegrityError:  # another request stored the same template a moment ago
        template = Template.objects.get(key=key)
    return template


def record_origin(template: Template, kind: str, **fields: str) -> TemplateOrigin:
    """Remember one way this template arrived."""
    return TemplateOrigin.objects.create(template=template, kind=kind, **fields)


def request_analysis(template: Template, options: dict[str, Any] | None = None) -> Analysis:
    """Return the live analysis for (template, analyzer version, options), queueing one if none.

    A failed analysis is kept as it is; asking again queues a new one beside it. A stuck one
    (never sent, or its worker died) is sent again.
    """
    options = options or {}
    existing = live_analysis(template, options)
    if existing is None:
        return queue_analysis(template, options)
    if reconcile.is_stuck(existing):
        reconcile.revive(existing)
    return existing


def live_analysis(template: Template, options: dict[str, Any]) -> Analysis | None:
    """The newest analysis of (template, current analyzer, options) that did not fail."""
    return (
        Analysis.objects.filter(
            template=template,
            analyzer_version=engine.analyzer_version(),
            options_key=options_key(options),
        )
        .exclude(status=Analysis.Status.FAILED)
        .first()
    )


def queue_analysis(template: Template, options: dict[str, Any]) -> Analysis:
    """Create an analysis row and send its task once the row is committed."""
    analysis = Analysis.objects.create(
        template=template,
        analyzer_version=engine.analyzer_version(),
        options=options,
        options_key=options_key(options),
    )
    transaction.on_commit(partial(queueing.enqueue, analysis.pk))
    return analysis


def analyze_again(template: Template) -> Analysis:
    """Analyse with the current analyzer: send a queued analysis again, revive a stuck one.

    A done analysis is returned as it is (the same analyzer gives the same bytes); a failed one
    gets a new analysis beside it.
    """
    existing = live_analysis(template, {})
    if existing is None:
        return queue_analysis(template, {})
    if existing.status == Analysis.Status.QUEUED:
        transaction.on_commit(partial(queueing.enqueue, existing.pk))
    elif reconcile.is_stuck(existing):
        reconcile.revive(existing)
    return existing


def ingest(loaded: engine.TemplateSource, kind: str, **origin: str) -> Analysis:
    """Store a loaded template with its origin and return its analysis."""
    template = store_template(loaded)
    record_origin(template, kind, template_name=loaded.name, **origin)
    return request_analysis(template)


class TemplateChoiceNeeded(Exception):
    """The file holds several named templates and the request did not pick one."""

    def __init__(self, names: tuple[str, ...]) -> None:
        super().__init__(f"pick one of {len(names)} named templates: {', '.join(names)}")
        self.names = names


def ingest_from_hub(repo_id: str, revision: str = "", template_name: str = "") -> Analysis:
    """Fetch a repo's chat template, store it with its resolved commit, return its analysis."""
    fetched = hub.fetch_chat_template(repo_id, revision, template_name)
    loaded = _load_hub_file(fetched, template_name)
    if fetched.tokenizer_config:
        bos, eos = hub.special_tokens(fetched.tokenizer_config)
        loaded = replace(
            loaded, bos_token=loaded.bos_token or bos, eos_token=loaded.eos_token or eos
        )
    return ingest(
        loaded,
        TemplateOrigin.Kind.HUB,
        repo_id=repo_id,
        revision=revision,
        commit_sha=fetched.commit_sha,
        filename=fetched.filename,
        file_sha256=hashlib.sha256(fetched.data).hexdigest(),
    )


def _load_hub_file(fetched: hub.HubFile, template_name: str) -> engine.TemplateSource:
    """Read the named template the request picked; ask for a pick when there are several."""
    if fetched.file_names:  # one template per file: names come from the file list
        if not template_name and len(fetched.file_names) > 1:
            raise TemplateChoiceNeeded(fetched.file_names)
        if template_name and template_name not in fetched.file_names:
            raise hub.HubFetchError(
                "template_not_found",
                f"{fetched.repo_id} has no chat template named '{template_name}'; "
                f"it has {', '.join(fetched.file_names)}.",
            )
        loaded = engine.load_file(fetched.data, fetched.filename)
        return replace(loaded, name=template_name or "default", available_names=fetched.file_names)
    loaded = engine.load_file(fetched.data, fetched.filename, template_name or None)
    if not template_name and len(loaded.available_names) > 1:
        raise TemplateChoiceNeeded(loaded.available_names)
    return loaded


@dataclass(frozen=True)
class StoredUpload:
    """The named templates of one uploaded file, stored, the default one first."""

    filename: str
    file_sha256: str
    templates: tuple[tuple[str, Template], ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.templates)


def store_upload(data: bytes, filename: str) -> StoredUpload:
    """Store every named template of an uploaded file, each with its origin; queue nothing."""
    file_sha = hashlib.sha256(data).hexdigest()
    templates = []
    for loaded in engine.load_named_templates(data, filename):
        template = store_template(loaded)
        record_origin(
            template,
            TemplateOrigin.Kind.UPLOAD,
            filename=filename,
            template_name=loaded.name,
            file_sha256=file_sha,
        )
        templates.append((loaded.name, template))
    return StoredUpload(filename, file_sha, tuple(templates))


def stored_upload(file_sha256: str) -> StoredUpload | None:
    """Find an uploaded file's named templates again by the file's sha256."""
    origins = TemplateOrigin.objects.filter(
        kind=TemplateOrigin.Kind.UPLOAD, file_sha256=file_sha256
    ).select_related("template")
    by_name: dict[str, Template] = {}
    filename = ""
    for origin in origins.order_by("pk"):  # stored in file order, the default first
        by_name.setdefault(origin.template_name, origin.template)
        filename = filename or origin.filename
    if not by_name:
        return None
    return StoredUpload(filename, file_sha256, tuple(by_name.items()))


def analyze_picked(upload: StoredUpload, names: list[str]) -> list[Analysis]:
    """Return the analyses of the picked named templates, in file order, queueing as needed."""
    return [request_analysis(template) for name, template in upload.templates if name in names]


def ingest_paste(source: str, title: str = "") -> Analysis:
    """Store a pasted template and return its analysis."""
    return ingest(engine.load_pasted(source), TemplateOrigin.Kind.PASTE, title=title)


def ingest_edit(parent: Template, source: str, title: str = "") -> Analysis:
    """Store an edited source with its parent's special tokens and name; return its analysis."""
    pasted = engine.load_pasted(source)
    loaded = replace(
        pasted,
        name=parent.template_name,
        bos_token=pasted.bos_token or parent.bos_token,
        eos_token=pasted.eos_token or parent.eos_token,
    )
    template = store_template(loaded)
    TemplateOrigin.objects.create(
        template=template,
        kind=TemplateOrigin.Kind.EDIT,
        parent=parent,
        title=title,
        template_name=loaded.name,
    )
    return request_analysis(template)
