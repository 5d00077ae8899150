"""Loading chat templates from Jinja files, tokenizer configs and chat_template.json."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from analyzer.errors import TemplateLoadError
from analyzer.render.loading import (
    TemplateSource,
    load_template_bytes,
    load_template_file,
    load_template_text,
)
from analyzer.render.template import ChatTemplate

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "loading"
CHAT = [{"role": "user", "content": "Hi"}]


def test_it_reads_a_tokenizer_config_with_a_string_template_and_its_tokens() -> None:
    loaded = load_template_file(FIXTURES / "tokenizer_config_string.json")
    assert loaded.source.startswith("{{ bos_token }}{% for m in messages %}")
    assert (loaded.name, loaded.available_names) == ("default", ("default",))
    assert (loaded.bos_token, loaded.eos_token) == ("<|begin|>", "<|end|>")
    assert ChatTemplate.from_source(loaded).render(CHAT) == "<|begin|><|user|>Hi<|end|>"


def test_it_lists_every_named_template_and_picks_default() -> None:
    loaded = load_template_file(FIXTURES / "tokenizer_config_named.json")
    assert loaded.available_names == ("default", "tool_use", "rag")
    assert loaded.name == "default"
    assert ChatTemplate.from_source(loaded).render(CHAT) == "[user] Hi\n"


def test_it_selects_a_named_template() -> None:
    loaded = load_template_file(FIXTURES / "tokenizer_config_named.json", template_name="tool_use")
    assert loaded.name == "tool_use"
    assert loaded.source.startswith("TOOLS={{ tools | tojson }}")
    rendered = ChatTemplate.from_source(loaded).render(CHAT, tools=[{"name": "f"}])
    assert rendered == 'TOOLS=[{"name": "f"}]\n[user] Hi\n'


def test_it_reads_special_tokens_given_as_added_token_objects() -> None:
    loaded = load_template_file(FIXTURES / "tokenizer_config_named.json")
    assert (loaded.bos_token, loaded.eos_token) == ("<s>", "</s>")


def test_without_a_default_it_picks_the_first_named_template() -> None:
    loaded = load_template_file(FIXTURES / "tokenizer_config_no_default.json")
    assert (loaded.name, loaded.available_names) == ("tool_use", ("tool_use", "plain"))


def test_it_reads_chat_template_json() -> None:
    loaded = load_template_file(FIXTURES / "chat_template.json")
    assert loaded.bos_token == loaded.eos_token == ""
    rendered = ChatTemplate.from_source(loaded).render(CHAT, add_generation_prompt=True)
    assert rendered == "<user>Hi</user><assistant>"


def test_it_reads_chat_template_jinja_verbatim() -> None:
    path = FIXTURES / "chat_template.jinja"
    loaded = load_template_file(path)
    assert loaded.source == path.read_text(encoding="utf-8")
    assert ChatTemplate.from_source(loaded).render(CHAT) == "user: Hi\n"


def test_it_detects_json_by_content_when_the_name_does_not_say() -> None:
    data = (FIXTURES / "chat_template.json").read_bytes()
    loaded = load_template_bytes(data, filename="upload.bin")
    assert loaded.source.startswith("{% for m in messages %}<{{ m.role }}>")


def test_a_jinja_template_opening_with_a_tag_is_not_taken_for_json() -> None:
    text = '{%- if messages %}{"role": "{{ messages[0].role }}"}{% endif %}'
    assert load_template_text(text).source == text


def test_it_strips_a_utf8_byte_order_mark() -> None:
    loaded = load_template_bytes(b"\xef\xbb\xbf{{ messages|length }}")
    assert loaded.source == "{{ messages|length }}"


def test_sha256_is_the_digest_of_the_source() -> None:
    loaded = TemplateSource(source="{{ x }}")
    assert loaded.sha256 == hashlib.sha256(b"{{ x }}").hexdigest()


def test_an_empty_file_is_refused() -> None:
    with pytest.raises(TemplateLoadError) as caught:
        load_template_bytes(b" \n\t", filename="chat_template.jinja")
    assert caught.value.problem == "empty"
    assert str(caught.value).startswith("chat_template.jinja: the file is empty; expected a Jinja")


def test_empty_pasted_text_is_refused() -> None:
    with pytest.raises(TemplateLoadError, match="^the template is empty; expected a Jinja"):
        load_template_text("")


def test_binary_data_is_refused_with_the_offending_byte() -> None:
    with pytest.raises(TemplateLoadError) as caught:
        load_template_bytes(b"\x89PNG\r\n\x1a\nIHDR", filename="model.png")
    assert caught.value.problem == "binary"
    assert str(caught.value).startswith(
        "model.png: the file is binary data, not utf-8 text (undecodable byte 0x89 at offset 0)"
    )


def test_data_with_nul_bytes_is_refused_as_binary() -> None:
    with pytest.raises(TemplateLoadError, match=r"binary data, not text \(NUL byte at offset 3\)"):
        load_template_bytes(b"abc\x00def")


def test_invalid_json_reports_line_column_and_a_caret() -> None:
    with pytest.raises(TemplateLoadError) as caught:
        load_template_file(FIXTURES / "broken.json")
    error = caught.value
    assert (error.problem, error.lineno, error.column) == ("invalid_json", 4, 3)
    assert str(error) == (
        "broken.json: invalid JSON at line 4, column 3: Expecting ',' delimiter\n"
        '      "eos_token": "</s>"\n'
        "      ^"
    )


def test_a_config_without_a_chat_template_says_so_and_lists_its_keys() -> None:
    with pytest.raises(TemplateLoadError) as caught:
        load_template_file(FIXTURES / "tokenizer_config_without_template.json")
    assert caught.value.problem == "no_chat_template"
    assert str(caught.value).startswith(
        'tokenizer_config_without_template.json: this JSON config has no "chat_template"'
        " (its keys: bos_token, eos_token, model_max_length, tokenizer_class)"
    )


def test_an_unknown_template_name_lists_the_available_ones() -> None:
    with pytest.raises(TemplateLoadError) as caught:
        load_template_file(FIXTURES / "tokenizer_config_named.json", template_name="chat")
    assert caught.value.problem == "unknown_name"
    assert caught.value.available_names == ("default", "tool_use", "rag")
    assert str(caught.value) == (
        "tokenizer_config_named.json: no chat template named 'chat';"
        " available: 'default', 'tool_use', 'rag'"
    )


def test_a_raw_template_only_answers_to_default() -> None:
    assert load_template_text("x", template_name="default").name == "default"
    expected = "no chat template named 'tool_use'; available: 'default'"
    with pytest.raises(TemplateLoadError, match=expected):
        load_template_text("x", template_name="tool_use")


def test_a_malformed_template_list_names_the_bad_entry() -> None:
    text = '{"chat_template": [{"name": "default", "template": 3}]}'
    with pytest.raises(TemplateLoadError) as caught:
        load_template_text(text, filename="tokenizer_config.json")
    assert caught.value.problem == "bad_config"
    assert str(caught.value).endswith("entry 0 has name a string and template a number")


def test_a_json_config_that_is_not_an_object_is_refused() -> None:
    expected = 'expected a JSON object with a "chat_template" key; found a list'
    with pytest.raises(TemplateLoadError, match=expected):
        load_template_text("[1, 2]", filename="tokenizer_config.json")


def test_a_special_token_of_the_wrong_shape_is_refused() -> None:
    text = '{"chat_template": "x", "eos_token": 7}'
    with pytest.raises(TemplateLoadError, match='"eos_token" must be a string or an object'):
        load_template_text(text, filename="tokenizer_config.json")


def test_a_missing_file_is_reported_as_unreadable(tmp_path: Path) -> None:
    with pytest.raises(TemplateLoadError) as caught:
        load_template_file(tmp_path / "nope.jinja")
    assert caught.value.problem == "unreadable"
    assert "nope.jinja: cannot read the file: No such file or directory" in str(caught.value)
