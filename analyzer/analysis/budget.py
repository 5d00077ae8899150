"""The budget of one whole analysis: total rendering time, and renders not worth repeating.

Each render is bounded by `RenderLimits` (1 s); an analysis makes ~40 renders, so a template
that is slow for every input would cost 40 s. A render that runs out of time or memory would
do so again for the next input (the inputs differ by a few words), so the analysis stops at
the first one, and all renders together may take at most `seconds`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from analyzer.errors import AnalysisLimit, AnalysisLimitError, RenderLimitError

ANALYSIS_SECONDS = 5.0
# Limits whose hit says the next render would hit them too (size and range checks refuse
# before they allocate, so those stay a per-comparison "unsupported").
REPEATING_LIMITS = frozenset({"time", "memory"})
HITS_BEFORE_SUCCESS = 3


@dataclass(frozen=True)
class AnalysisBudget:
    """When the renders of one analysis must have finished."""

    seconds: float
    deadline: float

    def check(self, renders: int) -> None:
        """Stop the analysis if its rendering time is spent."""
        if time.perf_counter() > self.deadline:
            raise AnalysisLimitError(
                f"its renders took longer than {self.seconds:g} s in total"
                f" ({renders} renders done)",
                limit="analysis_time", allowed=self.seconds,
            )


_UNBOUNDED = AnalysisBudget(float("inf"), float("inf"))
_BUDGET: ContextVar[AnalysisBudget] = ContextVar("analysis_budget", default=_UNBOUNDED)
current_analysis_budget = _BUDGET.get


@contextmanager
def analysis_budget(seconds: float = ANALYSIS_SECONDS) -> Iterator[AnalysisBudget]:
    """Bound the renders inside this block to `seconds` in total (nested blocks keep the outer)."""
    outer = _BUDGET.get()
    if outer is not _UNBOUNDED:
        yield outer
        return
    budget = AnalysisBudget(seconds, time.perf_counter() + seconds)
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)


def stop_if_repeating(error: RenderLimitError, label: str, hits_before_success: int) -> None:
    """Stop the analysis when a render hit a limit every other render would hit too.

    Time and memory repeat for any input; any limit does when the first renders of an
    analysis all hit one (`hits_before_success`, this one included), whatever they held.
    """
    if error.limit in REPEATING_LIMITS or hits_before_success >= HITS_BEFORE_SUCCESS:
        raise AnalysisLimitError(
            f"the render {label!r} hit the {error.limit} limit ({error}); the other renders"
            " would hit it too", limit=_ANALYSIS_LIMIT.get(error.limit, "render_limit"),
            allowed=error.allowed,
        )


_ANALYSIS_LIMIT: dict[str, AnalysisLimit] = {"time": "render_time", "memory": "memory"}
