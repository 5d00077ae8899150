"""Add templates to the corpus: from a folder of files, or fetched from the Hub by the manifest."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.utils import timezone

from lab.analyses import engine as analyses_engine
from lab.analyses import intake
from lab.analyses.models import TemplateOrigin
from lab.corpus.models import CorpusTemplate

TEMPLATE_SUFFIXES = (".jinja", ".json")


@dataclass
class Report:
    """What an import or a sync did, entry by entry."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def describe(self) -> str:
        """Summarize in one line, then one line per problem."""
        lines = [
            f"{len(self.added)} added, {len(self.updated)} updated, "
            f"{len(self.unchanged)} unchanged, {len(self.problems)} problem(s)"
        ]
        return "\n".join(lines + [f"  {problem}" for problem in self.problems])


def save_entry(
    name: str,
    loaded: analyses_engine.TemplateSource,
    origin: dict[str, str],
    report: Report,
    **fields: Any,
) -> CorpusTemplate:
    """Store the template and point the named corpus entry at it; note what changed."""
    template = intake.store_template(loaded)
    entry = CorpusTemplate.objects.filter(name=name).first()
    if entry is not None and entry.template_id == template.pk and entry.active:
        CorpusTemplate.objects.filter(pk=entry.pk).update(**fields)
        report.unchanged.append(name)
        return entry
    intake.record_origin(template, template_name=loaded.name, **origin)
    values = {"template": template, "active": True, "updated_at": timezone.now(), **fields}
    entry, created = CorpusTemplate.objects.update_or_create(name=name, defaults=values)
    (report.added if created else report.updated).append(name)
    return entry


def entry_names(stem: str, loaded: list[analyses_engine.TemplateSource]) -> list[str]:
    """Name a file's templates: the stem for the default one, stem[name] for the others."""
    return [stem if index == 0 else f"{stem}[{source.name}]" for index, source in enumerate(loaded)]


def import_directory(folder: Path) -> Report:
    """Load every template file (.jinja, .json) of a folder into the corpus."""
    report = Report()
    for path in sorted(p for p in folder.iterdir() if p.suffix in TEMPLATE_SUFFIXES):
        data = path.read_bytes()
        try:
            loaded = analyses_engine.load_named_templates(data, path.name)
        except analyses_engine.AnalyzerError as exc:
            report.problems.append(f"{path.name}: {exc}")
            continue
        origin = {
            "kind": TemplateOrigin.Kind.IMPORT,
            "filename": path.name,
            "file_sha256": hashlib.sha256(data).hexdigest(),
        }
        for name, source in zip(entry_names(path.stem, loaded), loaded, strict=True):
            save_entry(
                name,
                source,
                origin,
                report,
                source=CorpusTemplate.Source.IMPORT,
                filename=path.name,
                template_name=source.name,
            )
    return report
