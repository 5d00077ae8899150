"""The database-backed lab tests again, on PostgreSQL (the deployment database).

The suite runs on SQLite; this test re-runs the modules that touch the database in a child
pytest with DATABASE_URL pointing at the machine's PostgreSQL (127.0.0.1:5432, user postgres,
or LAB_TEST_POSTGRES_URL), and skips when no server answers.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
POSTGRES_URL = os.environ.get(
    "LAB_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/template_lab"
)
DATABASE_MODULES = [
    "tests/lab/test_intake.py",
    "tests/lab/test_tasks.py",
    "tests/lab/test_views.py",
    "tests/lab/test_consumers.py",
    "tests/lab/test_celery_integration.py",
    "tests/lab/test_corpus_entries.py",
    "tests/lab/test_corpus_runs.py",
    "tests/lab/test_corpus_views.py",
]
NESTED = "LAB_POSTGRES_RERUN"


def _server_answers(url: str) -> bool:
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 5432), 1):
            return True
    except OSError:
        return False


@pytest.mark.skipif(bool(os.environ.get(NESTED)), reason="already the PostgreSQL re-run")
@pytest.mark.skipif(
    os.environ.get("DATABASE_URL", "").startswith("postgres"),
    reason="this whole run already uses PostgreSQL",
)
def test_the_database_tests_pass_on_postgresql() -> None:
    if not _server_answers(POSTGRES_URL):
        pytest.skip(f"no PostgreSQL server at {POSTGRES_URL}")
    env = {**os.environ, "DATABASE_URL": POSTGRES_URL, NESTED: "1"}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *DATABASE_MODULES],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else ""
    assert run.returncode == 0, f"{summary}\n{run.stdout[-6000:]}\n{run.stderr[-2000:]}"
    assert " passed" in summary and "failed" not in summary
