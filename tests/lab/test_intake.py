"""Storing templates once and deciding when an analysis is new."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from lab.analyses import engine, intake
from lab.analyses.models import Analysis, Template, TemplateOrigin, options_key

pytestmark = pytest.mark.django_db

SOURCE = "{% for m in messages %}{{ m.content }}{% endfor %}"


def test_a_template_is_stored_once_under_the_sha256_of_its_source() -> None:
    first = intake.store_template(engine.load_pasted(SOURCE))
    again = intake.store_template(engine.load_pasted(SOURCE))
    assert first.pk == again.pk
    assert first.sha256 == hashlib.sha256(SOURCE.encode()).hexdigest()
    assert Template.objects.count() == 1


def test_each_arrival_is_recorded_as_an_origin() -> None:
    intake.ingest(engine.load_pasted(SOURCE), TemplateOrigin.Kind.PASTE)
    intake.ingest(engine.load_pasted(SOURCE), TemplateOrigin.Kind.UPLOAD, filename="t.jinja")
    template = Template.objects.get()
    assert sorted(template.origins.values_list("kind", flat=True)) == ["paste", "upload"]


def test_asking_again_returns_the_same_live_analysis() -> None:
    template = intake.store_template(engine.load_pasted(SOURCE))
    first = intake.request_analysis(template)
    assert intake.request_analysis(template).pk == first.pk
    assert first.analyzer_version == engine.analyzer_version()


def test_a_failed_analysis_is_kept_and_a_new_one_is_queued_beside_it() -> None:
    template = intake.store_template(engine.load_pasted(SOURCE))
    failed = intake.request_analysis(template)
    Analysis.objects.filter(pk=failed.pk).update(status=Analysis.Status.FAILED, error="boom")
    retry = intake.request_analysis(template)
    assert retry.pk != failed.pk
    assert Analysis.objects.get(pk=failed.pk).error == "boom"


def test_another_analyzer_version_or_options_make_a_new_analysis() -> None:
    template = intake.store_template(engine.load_pasted(SOURCE))
    old = Analysis.objects.create(
        template=template,
        analyzer_version="0.0.1+old",
        options_key=options_key({}),
        status=Analysis.Status.DONE,
    )
    current = intake.request_analysis(template)
    with_options = intake.request_analysis(template, {"handler": "auto"})
    assert len({old.pk, current.pk, with_options.pk}) == 3


def test_options_key_ignores_key_order() -> None:
    assert options_key({"a": 1, "b": [1, 2]}) == options_key({"b": [1, 2], "a": 1})
    assert options_key({"a": 1}) != options_key({"a": 2})


def test_an_upload_is_found_again_by_file_sha_with_its_names_in_file_order(
    fake_hub: Any,
) -> None:
    config = fake_hub.repos["tests/named"].files["tokenizer_config.json"]
    stored = intake.store_upload(config, "tokenizer_config.json")
    intake.store_upload(config, "tokenizer_config.json")  # the same file again
    again = intake.stored_upload(stored.file_sha256)
    assert again is not None
    assert stored.names == again.names == ("default", "tool_use")
    assert again.filename == "tokenizer_config.json"
    assert [t.pk for _, t in again.templates] == [t.pk for _, t in stored.templates]
    assert intake.stored_upload("0" * 64) is None
    [picked] = intake.analyze_picked(again, ["tool_use"])
    assert picked.template == dict(again.templates)["tool_use"]


def test_the_same_source_with_other_special_tokens_is_another_template() -> None:
    # InternLM2's case: a tokenizer_config.json whose bos_token the template renders.
    source = "{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}"
    bare = intake.store_template(engine.load_pasted(source))
    config = {"chat_template": source, "bos_token": "<s>", "eos_token": "</s>"}
    with_tokens = engine.load_file(json.dumps(config).encode(), "tokenizer_config.json")
    tokened = intake.store_template(with_tokens)
    assert tokened.pk != bare.pk and tokened.sha256 == bare.sha256
    assert (tokened.bos_token, tokened.eos_token) == ("<s>", "</s>")
    assert bare.key == bare.sha256 and tokened.key != tokened.sha256
    assert intake.store_template(with_tokens).pk == tokened.pk
    assert intake.request_analysis(tokened).pk != intake.request_analysis(bare).pk


@pytest.mark.parametrize(
    ("kind", "fields", "title"),
    [
        ("paste", {"title": "my fix"}, "my fix"),
        ("hub", {"repo_id": "org/model", "commit_sha": "0123456789abcdef"}, "org/model@0123456789"),
        ("upload", {"filename": "chat.jinja"}, "chat.jinja"),
        ("paste", {}, "ChatML template (pasted)"),
    ],
)
def test_every_template_gets_a_title(kind: str, fields: dict[str, str], title: str) -> None:
    source = "<|im_start|>{% for m in messages %}{{ m.content }}{% endfor %}"
    template = intake.store_template(engine.load_pasted(source))
    intake.record_origin(template, kind, **fields)
    assert template.display_name == title


def test_a_paste_of_no_known_family_is_titled_as_pasted() -> None:
    template = intake.ingest(engine.load_pasted(SOURCE), TemplateOrigin.Kind.PASTE).template
    assert template.display_name == "pasted template"
