"""Fixtures shared by the lab and browser tests; the analyzer's tests use none of them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared"
CORPUS_TEMPLATES = SHARED / "corpus" / "templates"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run browser tests last: Playwright's event loop upsets asyncio use later in the process."""
    items.sort(key=lambda item: "tests/browser/" in item.nodeid.replace("\\", "/"))


@pytest.fixture(scope="session")
def corpus_templates() -> Path:
    """The shared corpus of real chat templates."""
    if not CORPUS_TEMPLATES.is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS_TEMPLATES}")
    return CORPUS_TEMPLATES


@pytest.fixture(scope="session")
def fake_hub(corpus_templates: Path) -> Iterator[object]:
    """A real HTTP server answering Hub endpoints for `corpus/<stem>` repos and test repos."""
    from hub_server import FakeHub, FakeRepo

    hub = FakeHub(corpus_templates)
    template = (corpus_templates / "Qwen-Qwen3-0.6B.jinja").read_bytes()
    hub.add(FakeRepo("tests/gated", {"chat_template.jinja": template}, gated=True))
    hub.add(FakeRepo("tests/private", {"chat_template.jinja": template}, token="hf_lab_test"))
    hub.add(FakeRepo("tests/no-template", {"README.md": b"# nothing here\n"}))
    hub.add(FakeRepo("tests/slow", {"chat_template.jinja": template}, delay=3.0))
    hub.add(FakeRepo("tests/named", {"tokenizer_config.json": _named_config(corpus_templates)}))
    hermes = (corpus_templates / "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja").read_bytes()
    files = {
        "chat_template.jinja": template,
        "additional_chat_templates/tool_use.jinja": hermes,
        "tokenizer_config.json": b'{"bos_token": "<s>", "eos_token": "<|im_end|>"}',
    }
    hub.add(FakeRepo("tests/named-files", files))
    hub.add(_history_repo(corpus_templates))
    hub.start()
    yield hub
    hub.stop()


def _history_repo(corpus: Path) -> object:
    """A repo whose template changed twice among commits that touch only the README."""
    from hub_server import FakeRepo

    old = (corpus / "GLM-4.6.jinja").read_bytes()
    new = (corpus / "GLM-4.7-Flash.jinja").read_bytes()
    history = [
        ("Initial commit", {"README.md": b"# v0\n"}),
        ("Add chat template", {"README.md": b"# v0\n", "chat_template.jinja": old}),
        ("Update README", {"README.md": b"# v1\n", "chat_template.jinja": old}),
        ("Fix tool calls in the template", {"README.md": b"# v1\n", "chat_template.jinja": new}),
    ]
    return FakeRepo("tests/history", {"README.md": b"# v2\n", "chat_template.jinja": new},
                    history=history)


def _named_config(corpus: Path) -> bytes:
    """A tokenizer_config.json with two named templates, as Cohere's repos have."""
    import json

    default = (corpus / "CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja").read_text()
    tool_use = (corpus / "CohereForAI-c4ai-command-r-plus-tool_use.jinja").read_text()
    config = {
        "bos_token": "<BOS_TOKEN>",
        "eos_token": {"content": "<|END_OF_TURN_TOKEN|>"},
        "chat_template": [
            {"name": "default", "template": default},
            {"name": "tool_use", "template": tool_use},
        ],
    }
    return json.dumps(config).encode()
