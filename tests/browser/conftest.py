"""Browser tests: Debian's Chromium driven by Playwright against the whole lab in processes.

The lab runs as it does under `bin/lab` (daphne, a Celery worker, Valkey) on a fresh SQLite
database, with HF_ENDPOINT pointed at the local Hub server. The tests only drive the browser.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from lab.run import ROOT, free_port, migrate, start_valkey, start_web, start_worker, stop

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = ROOT / "test-artifacts" / "browser"


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    """Launch Debian's Chromium (Playwright's own download does not work here)."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not installed (bin/setup --browser installs it)")
    return {**browser_type_launch_args, "executable_path": str(CHROMIUM), "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict[str, Any]) -> dict[str, Any]:
    return {**browser_context_args, "viewport": {"width": 1400, "height": 1000}}


@dataclass
class LabStack:
    url: str
    worker: subprocess.Popen[bytes]


@pytest.fixture(scope="session")
def lab_stack(fake_hub: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabStack]:
    """Start the lab's processes on a fresh database."""
    work = tmp_path_factory.mktemp("lab-stack")
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{work / 'lab.sqlite3'}",
        "HF_ENDPOINT": fake_hub.url,
        "LAB_HUB_CACHE_DIR": str(work / "hf-cache"),
        "LAB_HUB_TIMEOUT": "2",
    }
    env.pop("HF_TOKEN", None)
    migrate(env)
    processes = []
    try:
        valkey, env["REDIS_URL"] = start_valkey(work / "valkey", log=work / "valkey.log")
        processes.append(valkey)
        worker = start_worker(env, concurrency=1, log=work / "worker.log")
        processes.append(worker)
        port = free_port()
        processes.append(start_web(env, "127.0.0.1", port, log=work / "web.log"))
        yield LabStack(f"http://127.0.0.1:{port}", worker)
    finally:
        stop(processes)
        _keep_logs(work)


def _keep_logs(work: Path) -> None:
    """Copy the services' logs next to the screenshots, for a failed CI run."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for log in work.glob("*.log"):
        shutil.copy(log, ARTIFACTS / log.name)


@pytest.fixture(scope="session")
def base_url(lab_stack: LabStack) -> str:
    """Let `page.goto("/")` reach the lab."""
    return lab_stack.url


@pytest.fixture
def screenshot(page: Any) -> Any:
    """Save a screenshot (the full page, or one element) under test-artifacts/browser/."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    def take(name: str, selector: str = "") -> Path:
        path = ARTIFACTS / f"{name}.png"
        if selector:
            page.locator(selector).screenshot(path=str(path))
        else:
            page.screenshot(path=str(path), full_page=True)
        return path

    return take
