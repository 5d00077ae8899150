"""Filling the corpus: `corpus import DIR` and `corpus sync` through the local Hub server."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from hub_server import commit_sha

from lab.analyses.models import TemplateOrigin
from lab.corpus import entries, manifest
from lab.corpus.models import CorpusTemplate

pytestmark = pytest.mark.django_db


@pytest.fixture
def folder(corpus_templates: Path, tmp_path: Path) -> Path:
    target = tmp_path / "templates"
    target.mkdir()
    for name in ("Qwen3-Coder", "google-gemma-2-2b-it"):
        shutil.copy(corpus_templates / f"{name}.jinja", target)
    (target / "notes.txt").write_text("not a template")
    return target


def named_config(corpus_templates: Path) -> str:
    return json.dumps(
        {
            "chat_template": [
                {
                    "name": "default",
                    "template": (corpus_templates / "Qwen3-Coder.jinja").read_text(),
                },
                {
                    "name": "tool_use",
                    "template": (corpus_templates / "Qwen-Qwen3-0.6B.jinja").read_text(),
                },
            ]
        }
    )


def test_import_loads_each_template_file_and_ignores_other_files(folder: Path) -> None:
    report = entries.import_directory(folder)
    assert sorted(report.added) == ["Qwen3-Coder", "google-gemma-2-2b-it"]
    entry = CorpusTemplate.objects.get(name="Qwen3-Coder")
    assert entry.source == CorpusTemplate.Source.IMPORT and entry.active
    assert entry.template.source == (folder / "Qwen3-Coder.jinja").read_text()
    origin = entry.template.origins.get()
    assert (origin.kind, origin.filename) == (TemplateOrigin.Kind.IMPORT, "Qwen3-Coder.jinja")


def test_importing_again_changes_only_what_changed(folder: Path) -> None:
    entries.import_directory(folder)
    (folder / "google-gemma-2-2b-it.jinja").write_text("{{ messages[0].content }}")
    report = entries.import_directory(folder)
    assert (report.added, report.updated, report.unchanged) == (
        [],
        ["google-gemma-2-2b-it"],
        ["Qwen3-Coder"],
    )
    entry = CorpusTemplate.objects.get(name="google-gemma-2-2b-it")
    assert entry.template.source == "{{ messages[0].content }}"


def test_a_file_with_named_templates_gives_one_entry_per_name(
    folder: Path, corpus_templates: Path
) -> None:
    (folder / "tokenizer_config.json").write_text(named_config(corpus_templates))
    entries.import_directory(folder)
    assert CorpusTemplate.objects.get(name="tokenizer_config").template_name == "default"
    assert (
        CorpusTemplate.objects.get(name="tokenizer_config[tool_use]").template.source
        == (corpus_templates / "Qwen-Qwen3-0.6B.jinja").read_text()
    )


def test_a_file_that_is_not_a_template_is_reported_by_name(folder: Path) -> None:
    (folder / "broken.json").write_text('{"chat_template": 3}')
    report = entries.import_directory(folder)
    assert len(report.problems) == 1
    assert report.problems[0].startswith('broken.json: broken.json: "chat_template" must be')
    assert report.describe().splitlines()[0] == "2 added, 0 updated, 0 unchanged, 1 problem(s)"


# --- the manifest and sync ---------------------------------------------------------------------


def write_manifest(path: Path, body: str) -> Path:
    path.write_text(body)
    return path


SYNC_MANIFEST = """
[[template]]
family = "qwen"
repo = "corpus/Qwen3-Coder"
revision = "main"

[[template]]
repo = "corpus/google-gemma-2-2b-it"
file = "chat_template.jinja"
name = "gemma-2"

[[template]]
repo = "tests/named"
template_name = "tool_use"

[[template]]
repo = "nobody/missing"
"""


def test_sync_fetches_each_entry_and_records_the_commit_the_hub_resolved(
    hub_env: Any, tmp_path: Path, corpus_templates: Path
) -> None:
    listed = manifest.read_manifest(write_manifest(tmp_path / "m.toml", SYNC_MANIFEST))
    lock = tmp_path / "lock.json"
    report = manifest.sync(listed, lock)
    assert sorted(report.added) == ["corpus/Qwen3-Coder", "gemma-2", "tests/named[tool_use]"]
    assert report.problems[0].startswith("nobody/missing: Repository nobody/missing was not found")
    coder = CorpusTemplate.objects.get(name="corpus/Qwen3-Coder")
    data = (corpus_templates / "Qwen3-Coder.jinja").read_bytes()
    assert coder.commit_sha == commit_sha("corpus/Qwen3-Coder", {"chat_template.jinja": data})
    assert (coder.revision, coder.family, coder.filename) == ("main", "qwen", "chat_template.jinja")
    assert coder.template.source == data.decode()
    origin = coder.template.origins.get(kind=TemplateOrigin.Kind.HUB)
    assert origin.commit_sha == coder.commit_sha
    locked = json.loads(lock.read_text())
    assert locked["corpus/Qwen3-Coder"]["commit_sha"] == coder.commit_sha
    assert "nobody/missing" not in locked


def test_a_named_template_from_the_hub_gets_the_repo_special_tokens(
    hub_env: Any, tmp_path: Path
) -> None:
    listed = manifest.read_manifest(write_manifest(tmp_path / "m.toml", SYNC_MANIFEST))
    manifest.sync(listed[2:3])
    named = CorpusTemplate.objects.get(name="tests/named[tool_use]")
    assert named.template_name == "tool_use"
    assert named.template.bos_token == "<BOS_TOKEN>"


def test_sync_retires_hub_entries_the_manifest_dropped(hub_env: Any, tmp_path: Path) -> None:
    listed = manifest.read_manifest(write_manifest(tmp_path / "m.toml", SYNC_MANIFEST))
    manifest.sync(listed[:2])
    manifest.sync(listed[:1])
    assert not CorpusTemplate.objects.get(name="gemma-2").active
    assert CorpusTemplate.objects.get(name="corpus/Qwen3-Coder").active


def test_the_sync_command_prints_its_report(
    hub_env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_manifest(tmp_path / "m.toml", SYNC_MANIFEST)
    call_command("corpus", "sync", "--manifest", str(path))
    out = capsys.readouterr().out
    assert out.startswith("sync: 3 added, 0 updated, 0 unchanged, 1 problem(s)\n")
    assert "  nobody/missing: Repository nobody/missing was not found" in out


def test_a_manifest_entry_with_an_unknown_key_is_named(tmp_path: Path) -> None:
    path = write_manifest(tmp_path / "m.toml", '[[template]]\nrepo = "a/b"\nrev = "main"\n')
    with pytest.raises(manifest.ManifestError) as raised:
        manifest.read_manifest(path)
    assert str(raised.value) == (
        f"{path}: template #1 (a/b): unknown key(s) ['rev']; expected some of "
        "['family', 'file', 'name', 'repo', 'revision', 'template_name']"
    )


def test_a_manifest_entry_without_a_repo_is_refused(tmp_path: Path) -> None:
    path = write_manifest(tmp_path / "m.toml", '[[template]]\nfile = "x.jinja"\n')
    with pytest.raises(
        CommandError, match=r'template #1: expected a table with a repo = "owner/name"'
    ):
        call_command("corpus", "sync", "--manifest", str(path))


def test_the_shipped_manifest_lists_unpinned_hub_repos() -> None:
    path = Path(settings.BASE_DIR) / "templates_corpus" / "manifest.toml"
    listed = manifest.read_manifest(path)
    assert len(listed) >= 25
    assert all(entry.revision == "main" for entry in listed)
    assert all(entry.repo.count("/") == 1 for entry in listed)
    assert len({entry.entry_name for entry in listed}) == len(listed)
    assert "Revisions are NOT pinned" in path.read_text()


# --- origins: an entry is updated only from where it came from -----------------------------------


def test_a_same_named_file_from_another_folder_is_a_reported_clash_not_a_replacement(
    folder: Path, tmp_path: Path
) -> None:
    entries.import_directory(folder)
    other = tmp_path / "other"
    other.mkdir()
    (other / "Qwen3-Coder.jinja").write_text("{{ messages[0].content }}")
    report = entries.import_directory(other)
    assert (report.added, report.updated, report.unchanged) == ([], [], [])
    (clash,) = report.clashes
    assert clash.startswith(f"Qwen3-Coder: not imported from {(other / 'Qwen3-Coder.jinja')}")
    assert f"comes from {(folder / 'Qwen3-Coder.jinja').resolve()}" in clash
    assert report.describe().splitlines()[0].endswith("0 problem(s), 1 name clash(es)")
    kept = CorpusTemplate.objects.get(name="Qwen3-Coder")
    assert kept.template.source == (folder / "Qwen3-Coder.jinja").read_text()


def test_the_import_command_exits_non_zero_naming_the_clashing_templates(
    folder: Path, tmp_path: Path
) -> None:
    call_command("corpus", "import", str(folder))
    other = tmp_path / "other"
    other.mkdir()
    (other / "Qwen3-Coder.jinja").write_text("{{ messages[0].content }}")
    (other / "fresh.jinja").write_text("{{ messages[-1].content }}")
    with pytest.raises(CommandError) as raised:
        call_command("corpus", "import", str(other))
    assert raised.value.returncode == 1
    assert "1 template(s) not imported" in str(raised.value)
    assert "(Qwen3-Coder)" in str(raised.value)
    # What did not clash was imported all the same.
    assert CorpusTemplate.objects.filter(name="fresh").exists()


def test_an_entry_made_before_origin_keys_is_adopted_by_its_folder(folder: Path) -> None:
    entries.import_directory(folder)
    CorpusTemplate.objects.update(origin_key=None)
    report = entries.import_directory(folder)
    assert sorted(report.unchanged) == ["Qwen3-Coder", "google-gemma-2-2b-it"]
    key = CorpusTemplate.objects.get(name="Qwen3-Coder").origin_key
    assert key == f"import:{(folder / 'Qwen3-Coder.jinja').resolve()}#default"
