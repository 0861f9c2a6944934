"""Wrappers that record every LLM call and every statement in the trace.

The engine hands tools and the agent these instead of the raw backend and
executor, so accounting cannot be forgotten: usage per call, the statement,
its status, rows and time, tagged with the node and purpose that caused it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from acts_sql.db.executor import Executor, ScratchSession, TableInfo
from acts_sql.db.result import ExecResult
from acts_sql.engine.budget import BudgetTracker
from acts_sql.engine.trace import Trace
from acts_sql.llm.base import LLMBackend, LLMRequest, LLMResponse, Usage


class UsageLedger:
    """All LLM usage of one run (thread-safe)."""

    def __init__(self) -> None:
        self.calls: list[Usage] = []
        self._lock = threading.Lock()

    def add(self, usage: Usage) -> None:
        with self._lock:
            self.calls.append(usage)


class TracedLLM:
    """An LLMBackend that charges the budget and records each call."""

    def __init__(
        self,
        inner: LLMBackend,
        trace: Trace,
        budget: BudgetTracker,
        ledger: UsageLedger,
        node: str | None = None,
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self._trace = trace
        self._budget = budget
        self._ledger = ledger
        self._node = node

    def for_node(self, node: str | None) -> TracedLLM:
        return TracedLLM(self.inner, self._trace, self._budget, self._ledger, node)

    def complete(self, request: LLMRequest) -> LLMResponse:
        self._budget.take_llm_call()
        try:
            response = self.inner.complete(request)
        except Exception as exc:
            self._trace.emit(
                "llm_call",
                node=self._node,
                purpose=request.purpose,
                summary=f"error: {exc}",
                ok=False,
                error=str(exc),
            )
            raise
        usage = response.usage
        self._ledger.add(usage)
        self._trace.emit(
            "llm_call",
            node=self._node,
            purpose=request.purpose,
            summary=(
                f"{usage.prompt_tokens}+{usage.completion_tokens} tokens, {usage.seconds:.2f} s"
            ),
            ok=True,
            prompt_tokens=usage.prompt_tokens,
            cached_prompt_tokens=usage.cached_prompt_tokens,
            completion_tokens=usage.completion_tokens,
            seconds=round(usage.seconds, 4),
            replayed=usage.replayed,
            response=response.text,
        )
        return response


def _record(trace: Trace, node: str | None, purpose: str, sql: str, result: ExecResult) -> None:
    trace.emit(
        "statement",
        node=node,
        purpose=purpose,
        summary=f"{result.status}, {result.row_count} row(s), {result.seconds * 1000:.1f} ms",
        sql=sql,
        status=result.status,
        row_count=result.row_count,
        truncated=result.truncated,
        error=result.error,
        seconds=round(result.seconds, 6),
    )


class _TracedScratch:
    def __init__(self, inner: ScratchSession, trace: Trace, node: str | None, purpose: str):
        self._inner, self._trace, self._node, self._purpose = inner, trace, node, purpose

    def create_stand_in(self, name: str, columns: list[str]) -> ExecResult:
        result = self._inner.create_stand_in(name, columns)
        _record(
            self._trace, self._node, "stand_in", f"stand-in {name}({', '.join(columns)})", result
        )
        return result

    def execute(self, sql: str, *, max_rows: int | None = None) -> ExecResult:
        result = self._inner.execute(sql, max_rows=max_rows)
        _record(self._trace, self._node, self._purpose, sql, result)
        return result


class TracedExecutor:
    """An Executor that records each statement with its node and purpose."""

    def __init__(self, inner: Executor, trace: Trace, node: str | None, purpose: str) -> None:
        self.inner = inner
        self.dialect = inner.dialect
        self._trace, self._node, self._purpose = trace, node, purpose

    def execute(
        self, sql: str, *, max_rows: int | None = None, timeout: float | None = None
    ) -> ExecResult:
        result = self.inner.execute(sql, max_rows=max_rows, timeout=timeout)
        _record(self._trace, self._node, self._purpose, sql, result)
        return result

    @contextmanager
    def scratch(self) -> Iterator[ScratchSession]:
        with self.inner.scratch() as session:
            yield _TracedScratch(session, self._trace, self._node, f"{self._purpose}:unit")

    def reflect(self, sample_rows: int = 3) -> list[TableInfo]:
        return self.inner.reflect(sample_rows)

    def close(self) -> None:
        """The wrapped executor belongs to the caller; closing is theirs."""
