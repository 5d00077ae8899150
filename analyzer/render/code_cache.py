"""Share Jinja's compiled code of a template between processes, through files in one folder.

Compiling a template (Jinja's lexer, parser and code generator, plus the sandbox's bounding
rewrite) is the largest part of a cold analysis and of the lab's first render of a finished
page, and the lab compiles each template in two processes: the analysis child, then the web
server. With a folder set (`use_folder`), a compile stores its code object (marshal) and the
template's free variables there, and any later compile of the same source, in any process,
loads them instead. Off unless a folder is set. A file is named by a hash of the source and of
everything that shapes the code (Python's bytecode version, Jinja's version and this package's
render code), so a change to any of them never loads stale code; unreadable files are ignored.
Only the template size check runs before a compile; it runs before a load too, and nothing
else in the code depends on the render limits (they are read at render time).
"""

from __future__ import annotations

import hashlib
import importlib.util
import marshal
import os
import tempfile
from functools import lru_cache
from pathlib import Path
from types import CodeType

import jinja2

_folder: Path | None = None


def use_folder(folder: Path | str | None) -> None:
    """Keep compiled templates in `folder` (created if missing); None turns the cache off."""
    global _folder
    _folder = None if folder is None else Path(folder)


def load(source: str) -> tuple[CodeType, frozenset[str]] | None:
    """The code and free variables stored for this source, or None."""
    path = _path(source)
    if path is None:
        return None
    try:
        code, free = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not isinstance(code, CodeType):
        return None
    return code, frozenset(free)


def store(source: str, code: CodeType, free_variables: frozenset[str]) -> None:
    """Keep the code of a successful compile (best effort: a failure only costs the saving)."""
    path = _path(source)
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = marshal.dumps((code, tuple(sorted(free_variables))))
        with tempfile.NamedTemporaryFile(dir=path.parent, delete=False) as part:
            part.write(data)
        os.replace(part.name, path)  # readers see the whole file or none
    except (OSError, ValueError):
        return


def _path(source: str) -> Path | None:
    if _folder is None:
        return None
    key = hashlib.sha256(f"{_code_shapers()}\0{source}".encode("utf-8", "surrogatepass"))
    digest = key.hexdigest()
    return _folder / digest[:2] / f"{digest}.code"


@lru_cache(maxsize=1)
def _code_shapers() -> str:
    """What the compiled code depends on besides the source."""
    render = Path(__file__).parent
    files = hashlib.sha256()
    for module in sorted(render.glob("*.py")):
        files.update(module.read_bytes())
    magic = importlib.util.MAGIC_NUMBER.hex()
    return f"{magic}-{jinja2.__version__}-{files.hexdigest()}"
