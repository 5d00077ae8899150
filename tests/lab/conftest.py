"""Lab test fixtures: Celery runs tasks inline, the Hub is the local fake."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lab import celery_app


@pytest.fixture(autouse=True)
def eager_celery() -> Iterator[None]:
    """Run tasks in the test process (the integration test starts a real worker instead)."""
    previous = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = previous


@pytest.fixture(autouse=True)
def empty_page_cache() -> Iterator[None]:
    """Start each test without pages cached by another (ids repeat across test databases)."""
    from django.core.cache import caches

    caches["pages"].clear()
    yield
    caches["pages"].clear()


@pytest.fixture
def hub_env(fake_hub: Any, monkeypatch: pytest.MonkeyPatch, settings: Any, tmp_path: Path) -> Any:
    """Point huggingface_hub at the local Hub server with an empty cache and no token."""
    monkeypatch.setenv("HF_ENDPOINT", fake_hub.url)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    settings.LAB_HUB_CACHE_DIR = str(tmp_path / "hf-cache")
    settings.LAB_HUB_TIMEOUT = 1.0
    return fake_hub


@pytest.fixture(scope="session")
def test_database_url(django_db_setup: None, django_db_blocker: Any) -> str:
    """Describe the test database as a DATABASE_URL, for service processes the tests start."""
    from django.db import connection

    with django_db_blocker.unblock():
        settings_dict = connection.settings_dict
    if settings_dict["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{Path(settings_dict['NAME']).resolve()}"
    user = settings_dict.get("USER") or ""
    password = f":{settings_dict['PASSWORD']}" if settings_dict.get("PASSWORD") else ""
    host = settings_dict.get("HOST") or "127.0.0.1"
    port = settings_dict.get("PORT") or 5432
    return f"postgres://{user}{password}@{host}:{port}/{settings_dict['NAME']}"
