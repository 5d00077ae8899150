"""Read chat templates from raw Jinja, tokenizer_config.json or chat_template.json/.jinja."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass


@dataclass(frozen=True)
class TemplateSource:
    """A chat template's source with the special tokens that came with it."""

    source: str
    name: str = "default"  # which named template this is
    available_names: tuple[str, ...] = ("default",)
    bos_token: str = ""
    eos_token: str = ""

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.source.encode("utf-8")).hexdigest()


def load_template_text(text: str, *, filename: str = "", template_name: str | None = None) -> TemplateSource:
    """Interpret text by its file name (or its content when unnamed) as a chat template."""
    return TemplateSource(source=text)
