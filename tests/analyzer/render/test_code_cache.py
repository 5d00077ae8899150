"""The shared compile cache: one process compiles a template, any other loads its code."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from analyzer.render import code_cache
from analyzer.render.sandbox import BoundedEnvironment
from analyzer.render.template import ChatTemplate

ROOT = Path(__file__).resolve().parents[3]
SOURCE = (
    "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% if mood %}{{ mood }}{% endif %}{% endif %}"
)
USER = {"role": "user", "content": "Hi"}


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Path]:
    code_cache.use_folder(tmp_path / "code")
    yield tmp_path / "code"
    code_cache.use_folder(None)


def refuse_to_compile(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("compiled although the code was stored")

    monkeypatch.setattr(BoundedEnvironment, "compile", refused)


def test_a_stored_compile_is_loaded_and_renders_the_same(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = ChatTemplate(SOURCE)
    assert len(list(folder.rglob("*.code"))) == 1
    refuse_to_compile(monkeypatch)
    again = ChatTemplate(SOURCE)
    assert again.free_variables == first.free_variables and "mood" in again.free_variables
    rendered = again.render([USER], add_generation_prompt=True, mood="calm")
    assert rendered == first.render([USER], add_generation_prompt=True, mood="calm")
    assert rendered == "<|user|>Hi<|assistant|>calm"


def test_another_process_loads_what_this_one_compiled(folder: Path) -> None:
    ChatTemplate(SOURCE)
    probe = (
        "import sys; from analyzer.render import code_cache; "
        "from analyzer.render.sandbox import BoundedEnvironment as E; "
        "from analyzer.render.template import ChatTemplate; "
        "E.compile = lambda *a, **k: sys.exit('compiled anew'); "
        f"code_cache.use_folder({str(folder)!r}); "
        f"print(ChatTemplate({SOURCE!r}).render([{USER!r}]))"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                          text=True, check=False)
    assert (done.returncode, done.stdout.strip()) == (0, "<|user|>Hi"), done.stderr


def test_an_unreadable_file_is_compiled_anew(folder: Path) -> None:
    ChatTemplate(SOURCE)
    [stored] = folder.rglob("*.code")
    stored.write_bytes(b"not marshal data")
    assert ChatTemplate(SOURCE).render([USER]) == "<|user|>Hi"
    assert stored.read_bytes() != b"not marshal data"  # stored again


def test_nothing_is_stored_without_a_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code_cache.use_folder(None)
    monkeypatch.chdir(tmp_path)
    ChatTemplate(SOURCE)
    assert code_cache.load(SOURCE) is None
    assert not list(tmp_path.rglob("*.code"))
