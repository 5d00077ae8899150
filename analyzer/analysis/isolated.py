"""Run an analysis in a child process that is killed when it outruns its wall clock or memory.

The render checks are cooperative: one C-level call (comparing two huge lists, a regex, a
sort) runs to its end without passing any of them. A forked child with an address-space
limit, watched by a parent that SIGKILLs it at the deadline, bounds even that. `run_isolated`
does this for any job that renders a template (the CLI's `compare` and `robustness` too).
"""

from __future__ import annotations

import gc
import os
import pickle
import resource
import select
import signal
import time
from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypeVar, cast

from analyzer.analysis.pipeline import analyze_source
from analyzer.canonical import analysis_from_json, analysis_to_json
from analyzer.errors import AnalysisLimit, AnalysisLimitError, AnalyzerError, IsolatedAnalysisError
from analyzer.model import Analysis
from analyzer.render.loading import TemplateSource

WALL_SECONDS = 8.0
MEMORY_MB = 1024  # on top of what the process already maps when it forks
MIB = 1024 * 1024
EXIT_NO_MEMORY = 3
EXIT_INTERNAL_ERROR = 4  # a job raised what the analyzer never raises: the child may be unsound
Reply = tuple[str, str, Any, float]  # ok/limit/error, limit or error class, value or message
T = TypeVar("T")


@lru_cache(maxsize=64)
def analyze_isolated(
    source: TemplateSource, *, seconds: float = WALL_SECONDS, memory_mb: int = MEMORY_MB
) -> str:
    """Analyze in a child process and return the canonical JSON (cached: it is immutable)."""
    return run_isolated(
        lambda: analysis_to_json(analyze_source(source)), seconds=seconds, memory_mb=memory_mb
    )


def run_isolated(
    job: Callable[[], T],
    *,
    seconds: float = WALL_SECONDS,
    memory_mb: int = MEMORY_MB,
    what: str = "analysis",
) -> T:
    """Run `job` in a forked child capped at `seconds` of wall clock and `memory_mb` more
    memory; return its (picklable) result or raise its error. `what` names the job in the
    message of a limit it hits ("the comparison was stopped: ...")."""
    read_fd, write_fd = os.pipe()
    pid = fork_frozen()
    if pid == 0:  # the child never returns
        os.close(read_fd)
        _child(job, memory_mb, write_fd)
    os.close(write_fd)
    try:
        data = _read_until(read_fd, time.monotonic() + seconds)
    finally:
        os.close(read_fd)
    result: T = _outcome(pid, data, seconds, memory_mb, what)
    return result


def fork_frozen() -> int:
    """Fork with the parent's objects out of the child's garbage collections.

    A collection in the child would walk (and so write to, copying page by page) the whole
    inherited heap: the lab worker's ~100 MB. Frozen, the child collects only what it makes.
    """
    gc.freeze()
    pid = os.fork()
    if pid != 0:
        gc.unfreeze()
    return pid


def _child(job: Callable[[], Any], memory_mb: int, write_fd: int) -> None:
    def capped() -> Any:
        cap_address_space(mapped_bytes() + memory_mb * MIB)
        return job()

    status = EXIT_INTERNAL_ERROR
    try:  # the cap's failure is reported like the job's: a child never unwinds
        reply, status = job_reply(capped)
        with os.fdopen(write_fd, "wb") as pipe:
            pickle.dump(reply, pipe)
    finally:
        os._exit(status)  # no atexit handlers, no inherited database connections closed


def job_reply(job: Callable[[], Any]) -> tuple[Reply, int]:
    """Run a job in a child; return its reply to the parent and the child's exit status."""
    try:
        return ("ok", "", job(), 0.0), 0
    except MemoryError:
        return ("error", "MemoryError", "", 0.0), EXIT_NO_MEMORY
    except AnalysisLimitError as exc:
        status = EXIT_NO_MEMORY if exc.limit == "memory" else 0
        return ("limit", exc.limit, exc.message, exc.allowed), status
    except AnalyzerError as exc:
        return ("error", type(exc).__name__, str(exc), 0.0), 0
    except BaseException as exc:  # noqa: BLE001 - the child must report, never unwind
        name = type(exc).__name__
        return ("error", name, f"internal error ({name}): {exc}", 0.0), EXIT_INTERNAL_ERROR


def _read_until(fd: int, deadline: float) -> bytes | None:
    """Read fd to its end; None if the deadline comes first."""
    chunks: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _outcome(pid: int, data: bytes | None, seconds: float, memory_mb: int, what: str) -> Any:
    if data is None:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    if data is None:
        raise wall_clock_error(seconds, what)
    if not data or os.waitstatus_to_exitcode(status) == EXIT_NO_MEMORY:
        raise memory_error(memory_mb, what)
    return reply_value(pickle.loads(data), what)


def reply_value(reply: Reply, what: str) -> Any:
    """The value a child's reply carries, or the error it reports raised."""
    kind, name, value, allowed = reply
    if kind == "limit":
        raise AnalysisLimitError(value, limit=cast(AnalysisLimit, name), allowed=allowed,
                                 what=what)
    if kind != "ok":
        raise IsolatedAnalysisError(value, kind=name)
    return value


def wall_clock_error(seconds: float, what: str) -> AnalysisLimitError:
    """The error of a child killed at its deadline."""
    return AnalysisLimitError(f"it took longer than {seconds:g} s (wall clock)",
                              limit="wall_clock", allowed=seconds, what=what)


def memory_error(memory_mb: int, what: str) -> AnalysisLimitError:
    """The error of a child that ran out of its memory."""
    return AnalysisLimitError(f"it needed more than {memory_mb:,} MiB of memory",
                              limit="memory", allowed=memory_mb, what=what)


def mapped_bytes() -> int:
    """Return how much address space this process maps now (Linux; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def cap_address_space(limit: int, ceiling: tuple[int, int] | None = None) -> None:
    """Set this process's address-space limit to `limit` bytes, never above `ceiling` (the
    (soft, hard) limits it had; by default the current ones: a cap only ever lowers it). A
    resident child passes the limits it was forked with, so each job gets its own cap."""
    soft, hard = ceiling or resource.getrlimit(resource.RLIMIT_AS)
    for bound in (soft, hard):
        if bound != resource.RLIM_INFINITY:
            limit = min(limit, bound)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def analyze_bounded(source: TemplateSource) -> Analysis:
    """Analyze in a killable child process (see analyze_isolated) and return the Analysis."""
    return analysis_from_json(analyze_isolated(source))
