"""The analyzer's version: package version plus a hash of its own source files.

Any change to the analyzer's code, released or not, gives a new version string, so stored
analyses say exactly which code produced them.
"""

from __future__ import annotations

import hashlib
from importlib import metadata
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def package_version() -> str:
    """Return the installed distribution's version, or the source tree's default."""
    try:
        return metadata.version("template-lab")
    except metadata.PackageNotFoundError:
        return "0.0.0"


def source_hash(root: Path = _PACKAGE_DIR) -> str:
    """Hash every Python file of the package (names and bytes), in a fixed order."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode("utf-8") + b"\0")
        digest.update(path.read_bytes().replace(b"\r\n", b"\n") + b"\0")
    return digest.hexdigest()[:10]


ANALYZER_VERSION = f"{package_version()}+{source_hash()}"
