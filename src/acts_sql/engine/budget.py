"""Budgets that bound a correction: LLM calls, nodes, depth, wall time."""

from __future__ import annotations

import threading
import time

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_MAX_LLM_CALLS = 40
DEFAULT_MAX_NODES = 30
DEFAULT_MAX_DEPTH = 8
DEFAULT_MAX_SECONDS = 600.0


class Budget(BaseModel):
    """Limits of one correction. When one runs out, the best candidate is returned; the depth
    limit ends a path (the search goes back to explore another), not the run."""

    model_config = ConfigDict(extra="forbid")

    max_llm_calls: int = Field(DEFAULT_MAX_LLM_CALLS, ge=1)
    max_nodes: int = Field(DEFAULT_MAX_NODES, ge=1)
    max_depth: int = Field(DEFAULT_MAX_DEPTH, ge=1)
    max_seconds: float = Field(DEFAULT_MAX_SECONDS, gt=0)


def llm_calls_text(calls: int) -> str:
    """ "1 LLM call", "N LLM calls"."""
    return "1 LLM call" if calls == 1 else f"{calls} LLM calls"


class BudgetExhaustedError(Exception):
    """Raised inside the engine when a limit is hit; never leaves `correct`."""

    prefix = "budget exhausted"

    def __init__(self, which: str) -> None:
        super().__init__(f"{self.prefix}: {which}")
        self.which = which


class ScaledBudgetSpentError(BudgetExhaustedError):
    """The calls the evidence allowed are spent (`acts_sql.engine.scaled_budget`), below the
    budget's limit."""

    prefix = "scaled budget spent"


class BudgetTracker:
    """Counts what a run has used and says when a limit is reached."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.llm_calls = 0
        self.nodes_run = 0
        self.allowance: int | None = None
        """LLM calls the run may make in all, below `max_llm_calls`, when the evidence scaled
        it (`acts_sql.engine.scaled_budget`); None: the budget's limit."""
        self.allowance_reason = ""
        self._start = time.perf_counter()
        self._lock = threading.Lock()

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self._start

    @property
    def call_limit(self) -> int:
        """The LLM calls the run may make in all: the allowance, or the budget's limit."""
        if self.allowance is None:
            return self.budget.max_llm_calls
        return min(self.allowance, self.budget.max_llm_calls)

    def allow(self, calls: int, reason: str) -> None:
        """Scale the run's LLM calls to the evidence: `calls` in all (never past the limit)."""
        self.allowance = min(calls, self.budget.max_llm_calls)
        self.allowance_reason = reason

    def take_llm_call(self) -> None:
        with self._lock:
            if self.llm_calls >= self.call_limit:
                if self.call_limit < self.budget.max_llm_calls:
                    raise ScaledBudgetSpentError(
                        f"{llm_calls_text(self.call_limit)}: {self.allowance_reason}"
                    )
                raise BudgetExhaustedError(f"LLM calls ({self.budget.max_llm_calls})")
            self.check_time()
            self.llm_calls += 1

    def take_node(self) -> None:
        if self.nodes_run >= self.budget.max_nodes:
            raise BudgetExhaustedError(f"nodes ({self.budget.max_nodes})")
        self.check_time()
        self.nodes_run += 1

    def too_deep(self, depth: int) -> bool:
        """Whether a node at ``depth`` lies below the depth limit. Depth bounds a path, not
        the run: the search skips such a node and goes back (linear, with one path, stops)."""
        return depth > self.budget.max_depth

    def depth_exhausted(self) -> BudgetExhaustedError:
        """The error of a run whose only path reached the depth limit (linear)."""
        return BudgetExhaustedError(f"depth ({self.budget.max_depth})")

    def check_time(self) -> None:
        if self.elapsed > self.budget.max_seconds:
            raise self.out_of_time()

    def remaining(self) -> float:
        """Seconds of wall time left (max_seconds - elapsed; negative once overrun)."""
        return self.budget.max_seconds - self.elapsed

    def time_left(self, at_least: float = 0.0) -> float:
        """The seconds left; BudgetExhaustedError (wall time) when not more than `at_least`."""
        left = self.remaining()
        if left <= at_least:
            raise self.out_of_time()
        return left

    def out_of_time(self) -> BudgetExhaustedError:
        """The error of a run whose wall time is up."""
        return BudgetExhaustedError(f"wall time ({self.budget.max_seconds:g} s)")
