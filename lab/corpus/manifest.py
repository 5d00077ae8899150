"""Read the corpus manifest (templates_corpus/manifest.toml) and sync it from the Hub.

Each entry names a Hub repo, a revision (a branch, tag or commit; "main" when not pinned),
the file holding the chat template (empty: the first of chat_template.jinja,
chat_template.json, tokenizer_config.json the repo has, as transformers looks) and, for
files with several named templates, which one. Sync records the commit the Hub resolved for
each entry, in the database and, when asked, in a lock file.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from django.conf import settings
from huggingface_hub import HfApi, hf_hub_download

from lab.analyses import engine as analyses_engine
from lab.analyses import hub
from lab.analyses.models import TemplateOrigin
from lab.corpus.entries import Report, origin_key, save_entry
from lab.corpus.models import CorpusTemplate

DEFAULT_MANIFEST = Path(settings.BASE_DIR) / "templates_corpus" / "manifest.toml"


class ManifestError(Exception):
    """The manifest cannot be read; the message says which entry and why."""


@dataclass(frozen=True)
class ManifestEntry:
    """One template the corpus tracks on the Hub."""

    repo: str
    revision: str = "main"
    file: str = ""
    template_name: str = ""
    family: str = ""
    name: str = ""

    @property
    def entry_name(self) -> str:
        """The corpus name: given, or the repo id with the named template in brackets."""
        if self.name:
            return self.name
        return f"{self.repo}[{self.template_name}]" if self.template_name else self.repo


def read_manifest(path: Path = DEFAULT_MANIFEST) -> list[ManifestEntry]:
    """Parse the manifest's [[template]] tables."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ManifestError(f"{path}: cannot read the manifest ({exc})") from exc
    return [entry_from(item, index, path) for index, item in enumerate(data.get("template", []))]


def entry_from(item: Any, index: int, path: Path) -> ManifestEntry:
    """Build one entry, saying which one is wrong and how."""
    allowed = set(ManifestEntry.__dataclass_fields__)
    where = f"{path}: template #{index + 1}"
    if not isinstance(item, dict) or not isinstance(item.get("repo"), str) or not item["repo"]:
        raise ManifestError(f'{where}: expected a table with a repo = "owner/name"')
    unknown = set(item) - allowed
    if unknown:
        raise ManifestError(
            f"{where} ({item['repo']}): unknown key(s) {sorted(unknown)}; "
            f"expected some of {sorted(allowed)}"
        )
    return ManifestEntry(**{key: str(value) for key, value in item.items()})


def fetch(entry: ManifestEntry) -> hub.HubFile:
    """Download the entry's template file at its revision (the Hub resolves the commit)."""
    if not entry.file:
        return hub.fetch_chat_template(entry.repo, entry.revision)
    api = HfApi(endpoint=hub.endpoint())
    info = api.model_info(
        entry.repo, revision=entry.revision or None, timeout=settings.LAB_HUB_TIMEOUT
    )
    commit = info.sha or ""
    data = download(entry.repo, commit, entry.file)
    siblings = {s.rfilename for s in info.siblings or []}
    config = b""
    if entry.file != "tokenizer_config.json" and "tokenizer_config.json" in siblings:
        config = download(entry.repo, commit, "tokenizer_config.json")
    return hub.HubFile(entry.repo, entry.revision, commit, entry.file, data, config)


def download(repo: str, commit: str, filename: str) -> bytes:
    """Download one file of a repo at a commit (through the local cache)."""
    path = hf_hub_download(
        repo,
        filename,
        revision=commit,
        endpoint=hub.endpoint(),
        etag_timeout=settings.LAB_HUB_TIMEOUT,
        cache_dir=getattr(settings, "LAB_HUB_CACHE_DIR", None),
    )
    return Path(str(path)).read_bytes()


def load(entry: ManifestEntry, fetched: hub.HubFile) -> analyses_engine.TemplateSource:
    """Read the fetched file's (named) template, with the repo's special tokens."""
    loaded = analyses_engine.load_file(fetched.data, fetched.filename, entry.template_name or None)
    if fetched.tokenizer_config:
        bos, eos = hub.special_tokens(fetched.tokenizer_config)
        loaded = replace(
            loaded, bos_token=loaded.bos_token or bos, eos_token=loaded.eos_token or eos
        )
    return loaded


def sync_entry(entry: ManifestEntry, report: Report) -> dict[str, str] | None:
    """Fetch and store one entry; return its lock record, or None after noting the problem."""
    try:
        fetched = fetch(entry)
        loaded = load(entry, fetched)
    except (hub.HubFetchError, analyses_engine.AnalyzerError) as exc:
        report.problems.append(f"{entry.entry_name}: {exc}")
        return None
    except Exception as exc:  # noqa: BLE001 - huggingface_hub raises many kinds; report, go on
        report.problems.append(f"{entry.entry_name}: {type(exc).__name__}: {first_line(exc)}")
        return None
    origin = {
        "kind": TemplateOrigin.Kind.HUB,
        "repo_id": entry.repo,
        "revision": entry.revision,
        "commit_sha": fetched.commit_sha,
        "filename": fetched.filename,
    }
    save_entry(
        entry.entry_name,
        loaded,
        origin,
        report,
        # The file the manifest asks for (not the one the Hub served): the same manifest line
        # keeps its entry when a repo moves its template to another file.
        origin_key("hub", f"{entry.repo}/{entry.file}", entry.template_name),
        source=CorpusTemplate.Source.HUB,
        family=entry.family,
        repo_id=entry.repo,
        revision=entry.revision,
        commit_sha=fetched.commit_sha,
        filename=fetched.filename,
        template_name=entry.template_name,
    )
    return {
        "repo": entry.repo,
        "revision": entry.revision,
        "commit_sha": fetched.commit_sha,
        "file": fetched.filename,
        "template_name": entry.template_name,
        "template_sha256": loaded.sha256,
    }


def sync(entries: list[ManifestEntry], lock: Path | None = None) -> Report:
    """Fetch every manifest entry; retire Hub entries the manifest no longer lists."""
    report = Report()
    locked = {entry.entry_name: sync_entry(entry, report) for entry in entries}
    names = [entry.entry_name for entry in entries]
    CorpusTemplate.objects.filter(source=CorpusTemplate.Source.HUB).exclude(name__in=names).update(
        active=False
    )
    if lock is not None:
        records = {name: record for name, record in locked.items() if record is not None}
        lock.write_text(json.dumps(records, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return report


def first_line(exc: BaseException) -> str:
    """Return the first line of an exception's message."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
