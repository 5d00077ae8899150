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
    clashes: list[str] = field(default_factory=list)  # names another origin holds already

    def describe(self) -> str:
        """Summarize in one line, then one line per problem and per name clash."""
        clashes = f", {len(self.clashes)} name clash(es)" if self.clashes else ""
        lines = [
            f"{len(self.added)} added, {len(self.updated)} updated, "
            f"{len(self.unchanged)} unchanged, {len(self.problems)} problem(s){clashes}"
        ]
        notes = self.problems + self.clashes
        return "\n".join(lines + [f"  {note}" for note in notes])


def origin_key(kind: str, place: str, template_name: str) -> str:
    """Name where an entry comes from: an imported file's absolute path, or Hub repo/file."""
    return f"{kind}:{place}#{template_name or 'default'}"


def entry_for(name: str, key: str) -> CorpusTemplate | None:
    """The entry this origin fills: its own, or a same-named one from before origin keys."""
    entry = CorpusTemplate.objects.filter(origin_key=key).first()
    if entry is None:
        entry = CorpusTemplate.objects.filter(name=name, origin_key__isnull=True).first()
    return entry


def clash(name: str, key: str) -> str | None:
    """Say so when another origin's entry holds this name already (nothing is merged)."""
    holder = CorpusTemplate.objects.filter(name=name).exclude(origin_key=key).first()
    if holder is None or holder.origin_key is None:
        return None
    return (
        f"{name}: not imported from {key.split(':', 1)[1]}: the entry of that name comes from "
        f"{holder.origin_key.split(':', 1)[1]}; rename the file to keep both"
    )


def save_entry(
    name: str,
    loaded: analyses_engine.TemplateSource,
    origin: dict[str, str],
    report: Report,
    key: str,
    **fields: Any,
) -> CorpusTemplate | None:
    """Store the template and point this origin's entry at it; note what changed."""
    clashing = clash(name, key)
    if clashing is not None:
        report.clashes.append(clashing)
        return None
    template = intake.store_template(loaded)
    entry = entry_for(name, key)
    if entry is not None and entry.template_id == template.pk and entry.active:
        CorpusTemplate.objects.filter(pk=entry.pk).update(origin_key=key, **fields)
        report.unchanged.append(name)
        return entry
    intake.record_origin(template, template_name=loaded.name, **origin)
    values = {"template": template, "active": True, "updated_at": timezone.now(), **fields}
    if entry is None:
        report.added.append(name)
        return CorpusTemplate.objects.create(name=name, origin_key=key, **values)
    CorpusTemplate.objects.filter(pk=entry.pk).update(origin_key=key, **values)
    report.updated.append(name)
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
                origin_key("import", str(path.resolve()), source.name),
                source=CorpusTemplate.Source.IMPORT,
                filename=path.name,
                template_name=source.name,
            )
    return report
