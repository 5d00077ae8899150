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


@pytest.fixture
def hub_env(fake_hub: Any, monkeypatch: pytest.MonkeyPatch, settings: Any, tmp_path: Path) -> Any:
    """Point huggingface_hub at the local Hub server with an empty cache and no token."""
    monkeypatch.setenv("HF_ENDPOINT", fake_hub.url)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    settings.LAB_HUB_CACHE_DIR = str(tmp_path / "hf-cache")
    settings.LAB_HUB_TIMEOUT = 1.0
    return fake_hub
