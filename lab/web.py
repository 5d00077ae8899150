"""Serve the lab's ASGI app from N uvicorn processes, each on its own SO_REUSEPORT socket.

`python -m lab.web --host H --port P --workers N` (what `lab.run.start_web` starts). uvicorn's own
`--workers` shares one listening socket between its processes, and whichever process wakes first
accepts every connection waiting (asyncio takes up to a backlog's worth per wake-up): under a
burst of 200 connections one process took nearly all of them while the other idled (measured
1,310 ms against 30 ms of CPU), so a burst took as long as with one process. Here each process
listens on its own socket bound to the same port with SO_REUSEPORT, and the kernel spreads new
connections over them by their addresses' hash. This supervisor keeps the sockets, restarts a
process that dies (on the same socket: nothing queued on it is lost) and stops them all on
SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time

from lab.run import die_with_parent

GRACE_SECONDS = 5


def listening_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on (host, port) that other SO_REUSEPORT sockets may share."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def uvicorn_args(fd: int | None, host: str, port: int) -> list[str]:
    """Serve the app with one uvicorn process, on an inherited socket when `fd` is given."""
    # Django has no ASGI lifespan support: turn the probe off.
    where = ["--fd", str(fd)] if fd is not None else ["--host", host, "--port", str(port)]
    return [
        sys.executable, "-m", "uvicorn", "lab.asgi:application", *where,
        "--lifespan", "off", "--ws", "websockets", "--timeout-graceful-shutdown",
        str(GRACE_SECONDS),
    ]


def serve(host: str, port: int, workers: int) -> int:
    """Run `workers` uvicorn processes until SIGTERM/SIGINT; restart any that dies."""
    if workers <= 1:  # one process needs no shared port: become it
        args = uvicorn_args(None, host, port)
        os.execv(args[0], args)
    sockets = [listening_socket(host, port) for _ in range(workers)]
    processes = [_start(sock) for sock in sockets]
    stopping: list[int] = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda number, frame: stopping.append(number))
    while not stopping:
        for index, process in enumerate(processes):
            if process.poll() is not None and not stopping:
                print(f"web: process {process.pid} exited ({process.returncode}); restarting it",
                      flush=True)
                processes[index] = _start(sockets[index])
        time.sleep(0.2)
    _stop(processes)
    return 0


def _start(sock: socket.socket) -> subprocess.Popen[bytes]:
    fd = sock.fileno()
    host, port = sock.getsockname()[:2]
    return subprocess.Popen(uvicorn_args(fd, host, port), pass_fds=[fd],
                            preexec_fn=die_with_parent)


def _stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        if process.poll() is None:
            process.terminate()
    deadline = time.monotonic() + GRACE_SECONDS + 2
    for process in processes:
        try:
            process.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab.web", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--workers", type=int, default=1)
    options = parser.parse_args(argv)
    return serve(options.host, options.port, options.workers)


if __name__ == "__main__":
    sys.exit(main())
