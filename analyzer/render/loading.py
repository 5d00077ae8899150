"""Read chat templates from raw Jinja, tokenizer_config.json or chat_template.json/.jinja."""

from __future__ import annotations

import codecs
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analyzer.errors import TemplateLoadError, source_excerpt

DEFAULT_NAME = "default"
JINJA_SUFFIXES = (".jinja", ".jinja2", ".j2")
EXPECTED = "expected a Jinja chat template, a tokenizer_config.json or a chat_template.json"
# JSON configs open with `{"` or `{}`; Jinja templates may open with `{%`, `{{` or `{#`.
_LOOKS_LIKE_JSON = re.compile(r"\s*\{\s*[\"}]")
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16"))


@dataclass(frozen=True)
class TemplateSource:
    """A chat template's source with the special tokens that came with it."""

    source: str
    name: str = DEFAULT_NAME  # which named template this is
    available_names: tuple[str, ...] = (DEFAULT_NAME,)
    bos_token: str = ""
    eos_token: str = ""

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.source.encode("utf-8")).hexdigest()


def load_template_file(path: str | Path, *, template_name: str | None = None) -> TemplateSource:
    """Read a template file (Jinja or JSON config) from disk."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TemplateLoadError(
            f"cannot read the file: {exc.strerror or exc}", problem="unreadable",
            filename=str(path),
        ) from exc
    return load_template_bytes(data, filename=path.name, template_name=template_name)


def load_template_bytes(
    data: bytes, *, filename: str = "", template_name: str | None = None
) -> TemplateSource:
    """Decode an uploaded file and interpret it as a chat template."""
    return load_template_text(
        decode_text(data, filename), filename=filename, template_name=template_name
    )


def load_template_text(
    text: str, *, filename: str = "", template_name: str | None = None
) -> TemplateSource:
    """Interpret text by its file name (or its content when unnamed) as a chat template."""
    text = text.removeprefix("\ufeff")
    if not text.strip():
        raise TemplateLoadError(f"the template is empty; {EXPECTED}", problem="empty",
                                filename=filename)
    if "\x00" in text:
        raise _binary_error(text.index("\x00"), filename)
    if is_json_config(text, filename):
        return _from_config(parse_json(text, filename), filename, template_name)
    _check_name(template_name, (DEFAULT_NAME,), filename)
    return TemplateSource(source=text)


def decode_text(data: bytes, filename: str = "") -> str:
    """Decode a file as UTF-8 (or UTF-16 with a BOM), refusing binary data."""
    if not data.strip():
        raise TemplateLoadError(f"the file is empty; {EXPECTED}", problem="empty",
                                filename=filename)
    encoding = next((enc for bom, enc in _BOMS if data.startswith(bom)), "utf-8")
    if encoding == "utf-8" and b"\x00" in data:
        raise _binary_error(data.index(b"\x00"), filename)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise TemplateLoadError(
            f"the file is binary data, not {encoding} text (undecodable byte"
            f" 0x{data[exc.start]:02x} at offset {exc.start}); {EXPECTED}",
            problem="binary", filename=filename,
        ) from None


def _binary_error(offset: int, filename: str) -> TemplateLoadError:
    return TemplateLoadError(
        f"the file is binary data, not text (NUL byte at offset {offset}); {EXPECTED}",
        problem="binary", filename=filename,
    )


def is_json_config(text: str, filename: str) -> bool:
    """Decide whether text is a JSON config: by file name, else by how it starts."""
    lowered = filename.lower()
    if lowered.endswith(".json"):
        return True
    if lowered.endswith(JINJA_SUFFIXES):
        return False
    return _LOOKS_LIKE_JSON.match(text) is not None


def parse_json(text: str, filename: str = "") -> Any:
    """Parse JSON, reporting the line, column and a caret on failure."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        excerpt = source_excerpt(text, exc.lineno, exc.colno)
        raise TemplateLoadError(
            f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
            + (f"\n{excerpt}" if excerpt else ""),
            problem="invalid_json", filename=filename, lineno=exc.lineno, column=exc.colno,
        ) from None


def _from_config(config: Any, filename: str, template_name: str | None) -> TemplateSource:
    if not isinstance(config, dict):
        raise TemplateLoadError(
            f"expected a JSON object with a \"chat_template\" key; found {_kind(config)}",
            problem="bad_config", filename=filename,
        )
    templates = named_templates(config, filename)
    names = tuple(templates)
    name = template_name if template_name is not None else default_name(names)
    _check_name(name, names, filename)
    return TemplateSource(
        source=templates[name],
        name=name,
        available_names=names,
        bos_token=token_text(config.get("bos_token"), "bos_token", filename),
        eos_token=token_text(config.get("eos_token"), "eos_token", filename),
    )


def named_templates(config: dict[str, Any], filename: str = "") -> dict[str, str]:
    """Return the config's templates by name ("default" for a single string)."""
    raw = config.get("chat_template")
    if raw is None:
        keys = ", ".join(sorted(config)) or "none"
        raise TemplateLoadError(
            f"this JSON config has no \"chat_template\" (its keys: {keys}); newer models keep"
            " the template in a separate chat_template.jinja file",
            problem="no_chat_template", filename=filename,
        )
    if isinstance(raw, str):
        templates = {DEFAULT_NAME: raw}
    elif isinstance(raw, list):
        # As transformers does: later entries with the same name replace earlier ones.
        templates = dict(_named_entry(entry, i, filename) for i, entry in enumerate(raw))
    else:
        raise _bad_template_list(f"found {_kind(raw)}", filename)
    if not templates:
        raise TemplateLoadError("\"chat_template\" is an empty list", problem="no_chat_template",
                                filename=filename)
    for name, source in templates.items():
        if not source.strip():
            raise TemplateLoadError(f"the chat template {name!r} is empty", problem="empty",
                                    filename=filename)
    return templates


def _named_entry(entry: Any, index: int, filename: str) -> tuple[str, str]:
    if not isinstance(entry, dict):
        raise _bad_template_list(f"entry {index} is {_kind(entry)}", filename)
    name, template = entry.get("name"), entry.get("template")
    if not isinstance(name, str) or not isinstance(template, str):
        raise _bad_template_list(
            f"entry {index} has name {_kind(name)} and template {_kind(template)}", filename
        )
    return name, template


def _bad_template_list(found: str, filename: str) -> TemplateLoadError:
    return TemplateLoadError(
        "\"chat_template\" must be a string or a list of {\"name\": ..., \"template\": ...}"
        f" objects with string values; {found}",
        problem="bad_config", filename=filename,
    )


def default_name(names: tuple[str, ...]) -> str:
    """Pick the template used when none is named: "default" if present, else the first."""
    return DEFAULT_NAME if DEFAULT_NAME in names or not names else names[0]


def _check_name(name: str | None, available: tuple[str, ...], filename: str) -> None:
    if name is None or name in available:
        return
    listed = ", ".join(repr(n) for n in available)
    raise TemplateLoadError(
        f"no chat template named {name!r}; available: {listed}",
        problem="unknown_name", filename=filename, available_names=available,
    )


def token_text(token: Any, key: str, filename: str = "") -> str:
    """Read a special token given as a string, as {"content": ...}, or absent."""
    if token is None:
        return ""
    if isinstance(token, str):
        return token
    if isinstance(token, dict) and isinstance(token.get("content"), str):
        return str(token["content"])
    raise TemplateLoadError(
        f"\"{key}\" must be a string or an object with a string \"content\"; found {_kind(token)}",
        problem="bad_config", filename=filename,
    )


def _kind(value: Any) -> str:
    """Describe a JSON value's type for an error message."""
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
             int: "a number", float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)
