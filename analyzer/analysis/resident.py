"""Run analyses one after another in one long-lived child, with each job's isolation intact.

`run_isolated` forks a child per job: a corpus worker then pays a fork, the child's page
copies and its exit for every template (~20 ms of ~40 ms per analysis). The resident child is
forked once and reused; each job keeps the guarantees of a child of its own:
- wall clock: the parent waits `seconds` for the reply, then SIGKILLs the child (the next job
  forks a new one);
- memory: the child's address space is capped at what it mapped when it was forked plus the
  job's `memory_mb`, a hard bound whatever earlier jobs left mapped. A child that earlier jobs
  grew past `RECYCLE_MB` exits after its job, and a job that ran out of memory in a child that
  had served others is run again in a fresh one, so a memory verdict never depends on the
  jobs before it;
- a hostile template cannot hurt the parent: it only ever runs in the child, which exits
  after a memory failure or an error that is not the analyzer's own.
Jobs are module-level functions and picklable arguments, sent over a pipe.
"""

from __future__ import annotations

import os
import pickle
import resource
import select
import signal
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from analyzer.analysis.isolated import (
    EXIT_INTERNAL_ERROR,
    MEMORY_MB,
    MIB,
    WALL_SECONDS,
    cap_address_space,
    fork_frozen,
    job_reply,
    mapped_bytes,
    memory_error,
    reply_value,
    wall_clock_error,
)
from analyzer.analysis.pipeline import analyze_uncached, compile_template
from analyzer.canonical import analysis_to_json
from analyzer.render.loading import TemplateSource

RECYCLE_MB = 256  # the child exits once earlier jobs left it this much above its fork
EXIT_RECYCLED = 5
_LENGTH = struct.Struct("<Q")
Job = tuple[Callable[..., Any], tuple[Any, ...], int]  # function, arguments, memory_mb


def analyze_resident(
    source: TemplateSource, *, seconds: float = WALL_SECONDS, memory_mb: int = MEMORY_MB
) -> str:
    """Analyze in the resident child and return the canonical JSON (see analyze_isolated)."""
    result: str = run_resident(analysis_json, source, seconds=seconds, memory_mb=memory_mb)
    return result


def analysis_json(source: TemplateSource) -> str:
    """Analyze without keeping anything: the child's caches would only grow."""
    return analysis_to_json(analyze_uncached(source, compile_template))


def run_resident(
    function: Callable[..., Any],
    *args: Any,
    seconds: float = WALL_SECONDS,
    memory_mb: int = MEMORY_MB,
    what: str = "analysis",
) -> Any:
    """Run `function(*args)` in the resident child, bounded as `run_isolated` bounds a job."""
    with _LOCK:
        job: Job = (function, args, memory_mb)
        child = _resident()
        served_before = child.served
        try:
            return child.run(job, seconds, what)
        except MemoryExhausted:
            if served_before == 0:
                raise memory_error(memory_mb, what) from None
        # Earlier jobs may have left the child less room: the verdict is a fresh child's.
        try:
            return _resident().run(job, seconds, what)
        except MemoryExhausted:
            raise memory_error(memory_mb, what) from None


def stop_resident() -> None:
    """Stop the resident child (it exits when its request pipe closes); a next job forks anew."""
    global _child
    with _LOCK:
        if _child is not None and _child.owner == os.getpid():
            _child.stop()
        _child = None


class MemoryExhausted(Exception):
    """The job ran out of the child's memory (or the child died without a reply)."""


@dataclass
class ResidentChild:
    """The parent's handle on its resident child: pid and the two pipe ends."""

    pid: int
    requests: int  # write end: jobs to the child
    replies: int  # read end: replies from the child
    owner: int  # the process that forked it (a forked copy of this handle is not the parent)
    served: int = 0

    def run(self, job: Job, seconds: float, what: str) -> Any:
        """Send a job, wait for its reply until the deadline, return its value."""
        try:
            send(self.requests, pickle.dumps(job))
        except BrokenPipeError:  # it died since it was checked: as a child that did not reply
            data: bytes | None = b""
        else:
            data = receive(self.replies, time.monotonic() + seconds)
        if data is None:
            self.stop(kill=True)
            raise wall_clock_error(seconds, what)
        if not data:
            self.stop()
            raise MemoryExhausted
        reply, staying = pickle.loads(data)
        self.served += 1
        if not staying:
            self.stop()
        if reply[0] == "error" and reply[1] == "MemoryError" or \
                reply[0] == "limit" and reply[1] == "memory":
            raise MemoryExhausted
        return reply_value(reply, what)

    def stop(self, *, kill: bool = False) -> None:
        """End the child (SIGKILL when it is busy) and reap it; forget this handle."""
        global _child
        if kill:
            os.kill(self.pid, signal.SIGKILL)
        for fd in (self.requests, self.replies):
            os.close(fd)
        exited(self.pid, wait=True)
        if _child is self:
            _child = None


_LOCK = threading.Lock()
_child: ResidentChild | None = None


def _resident() -> ResidentChild:
    """The resident child, forked now if there is none (or it exited between jobs)."""
    global _child
    if _child is not None and _child.owner == os.getpid():
        if not exited(_child.pid, wait=False):
            return _child
        os.close(_child.requests)
        os.close(_child.replies)
    _child = _fork_resident()
    return _child


def exited(pid: int, *, wait: bool) -> bool:
    """Reap the child if it has exited (waiting for it when `wait`); tell whether it has."""
    try:
        return os.waitpid(pid, 0 if wait else os.WNOHANG) != (0, 0)
    except ChildProcessError:  # reaped already (a SIGCHLD handler of the parent's)
        return True


def _fork_resident() -> ResidentChild:
    to_child, from_parent = os.pipe()[::-1]
    from_child, to_parent = os.pipe()
    pid = fork_frozen()
    if pid == 0:  # the child never returns: it must not unwind into the parent's code
        status = EXIT_INTERNAL_ERROR
        try:
            os.close(to_child)
            os.close(from_child)
            status = _serve(from_parent, to_parent)
        finally:
            os._exit(status)
    os.close(from_parent)
    os.close(to_parent)
    return ResidentChild(pid, to_child, from_child, owner=os.getpid())


def _serve(requests: int, replies: int) -> int:
    """The child: run jobs until the parent closes the request pipe (or dies) or a job ends
    the child's use; return the exit status."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    baseline, ceiling = mapped_bytes(), resource.getrlimit(resource.RLIMIT_AS)
    status = 0
    while status == 0:
        data = receive(requests, None)
        if not data:
            return 0
        function, args, memory_mb = pickle.loads(data)
        cap_address_space(baseline + memory_mb * MIB, ceiling)
        reply, status = job_reply(partial(function, *args))
        if status == 0 and mapped_bytes() > baseline + RECYCLE_MB * MIB:
            status = EXIT_RECYCLED
        try:
            send(replies, pickle.dumps((reply, status == 0)))
        except BrokenPipeError:  # the parent died meanwhile
            return 0
    return status


def send(fd: int, payload: bytes) -> None:
    """Write one length-prefixed message."""
    data = _LENGTH.pack(len(payload)) + payload
    while data:
        data = data[os.write(fd, data):]


def receive(fd: int, deadline: float | None) -> bytes | None:
    """Read one length-prefixed message: b"" at end of file, None if the deadline comes first."""
    header = _read_exactly(fd, _LENGTH.size, deadline)
    if not header:
        return header
    body = _read_exactly(fd, _LENGTH.unpack(header)[0], deadline)
    return body if body is None or body else b""


def _read_exactly(fd: int, size: int, deadline: float | None) -> bytes | None:
    chunks, left = [], size
    while left:
        wait = None if deadline is None else deadline - time.monotonic()
        if wait is not None and (wait <= 0 or not select.select([fd], [], [], wait)[0]):
            return None
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return b""
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)

