"""Wrappers that record every LLM call and every statement in the trace.

The engine hands tools and the agent these instead of the raw backend and
executor, so accounting cannot be forgotten: usage per call, the statement,
its status, rows and time, tagged with the node and purpose that caused it.

Deadlines. They also hold the run to its wall time (``Budget.max_seconds``),
which a check before each step cannot do alone, since one LLM call or one
statement can outlast what is left:

- an LLM call is sent with ``timeout_s`` = what is left of the run (or the
  request's own, when smaller); a backend that runs out of it raises
  :class:`~acts_sql.errors.LLMDeadlineError`, which becomes the run's
  ``budget exhausted: wall time`` when the run's time was the limit;
- a statement's timeout is capped at what is left (the executor keeps its own
  default when that ends in time), and a statement does not start with less
  than :data:`MIN_STATEMENT_SECONDS` left. A scratch session's statements
  (unit checks) have no timeout argument in the protocol: the time is only
  checked before them.

Isolation. Every statement the engine runs goes to the executor with
``isolate=True``: with writes allowed (a throw-away copy), each candidate, each
tool's check and the user's own SQL see the database as it was when the run
began, never what an earlier statement of the run left behind (the user's
``DELETE`` does not empty the table the candidates read). Read-only, it changes
nothing. An executor whose ``execute`` has no ``isolate`` keyword (written
before it existed) is called without it.

Unusable backends. An :class:`~acts_sql.errors.LLMUnavailableError` before any
call of the run was answered is marked ``before_any_reply`` (on the error and
its ``llm_call`` event): the search and the runner let it through, so the run
stops there and :func:`acts_sql.correct` raises it. After a reply it is an
ordinary LLM failure that ends the search with its best candidate.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from acts_sql.db.executor import (
    DEFAULT_TIMEOUT_S,
    RECURSIVE_TIMEOUT_S,
    Executor,
    ScratchSession,
    TableInfo,
    statement_timeout,
)
from acts_sql.db.language import database_executor, own_timeout
from acts_sql.db.result import ExecResult
from acts_sql.engine.budget import BudgetTracker
from acts_sql.engine.events import LlmCallData, StatementData
from acts_sql.engine.prefetch import Prefetcher
from acts_sql.engine.trace import Trace
from acts_sql.errors import ActsSqlError, LLMDeadlineError, LLMUnavailableError
from acts_sql.llm.base import LLMBackend, LLMRequest, LLMResponse, SqlNames, Usage
from acts_sql.sql.query_text import split_statements

FINISH_RESERVE_SECONDS = 1.0
"""An LLM call ends this long before the run's wall time, which is left for choosing and
returning the answer (a call stops at its deadline, but not at once)."""
MIN_STATEMENT_SECONDS = 0.05
"""A statement does not start with less than this left of the run's wall time."""


def capped_timeout(
    sql: str,
    timeout: float | None,
    left: float,
    *,
    default: float | None = None,
    dialect: str = "sqlite",
) -> float | None:
    """The timeout to run `sql` with so that it ends within `left` seconds.

    `timeout` is the caller's (None: the executor's default, which is
    `default` for every statement, or BIRD-CRITIC's 60 s / 15 s for ``WITH
    RECURSIVE`` per statement when `default` is None). None is returned when
    the default already ends in time, so the executor's own rule applies
    unchanged; otherwise the smallest limit, capped at `left` (never longer
    than what the executor would have allowed).
    """
    if timeout is not None:
        return min(timeout, left)
    if default is not None:
        return None if default <= left else left
    if left >= max(DEFAULT_TIMEOUT_S, RECURSIVE_TIMEOUT_S):
        return None
    try:
        texts = split_statements(sql, dialect) or [sql]
    except ActsSqlError:  # an unknown dialect name: judge the text as one statement
        texts = [sql]
    limits = [statement_timeout(text) for text in texts]
    if max(limits) <= left:
        return None
    return min(left, *limits)


class UsageLedger:
    """All LLM usage of one run (thread-safe)."""

    def __init__(self) -> None:
        self.calls: list[Usage] = []
        self._lock = threading.Lock()

    def add(self, usage: Usage) -> None:
        with self._lock:
            self.calls.append(usage)


class TracedLLM:
    """An LLMBackend that charges the budget, bounds each call by the time left,
    and records each call."""

    def __init__(
        self,
        inner: LLMBackend,
        trace: Trace,
        budget: BudgetTracker,
        ledger: UsageLedger,
        node: str | None = None,
        ahead: Prefetcher | None = None,
        sql_names: SqlNames | None = None,
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self._trace = trace
        self._budget = budget
        self._ledger = ledger
        self._node = node
        self._ahead = ahead
        self.sql_names = sql_names
        """The schema's names, given to every request that writes SQL (a local backend
        then holds the SQL to them); None: no request carries them."""

    def constrained(self, request: LLMRequest) -> LLMRequest:
        """`request` with the run's `sql_names` when it writes SQL: a text reply of the
        ``correct`` purpose (its ```sql blocks), or a JSON reply with a ``sql`` field."""
        if self.sql_names is None or request.sql_names is not None:
            return request
        schema = request.json_schema
        if schema is None and request.purpose != "correct":
            return request
        if schema is not None and "sql" not in (schema.get("properties") or {}):
            return request
        return request.model_copy(update={"sql_names": self.sql_names})

    @property
    def budget(self) -> BudgetTracker:
        """The run's budget (executors of the same run share it)."""
        return self._budget

    def for_node(self, node: str | None) -> TracedLLM:
        return TracedLLM(
            self.inner, self._trace, self._budget, self._ledger, node, self._ahead, self.sql_names
        )

    @property
    def parallel(self) -> int:
        """Requests this run may have in flight at once (1: none is sent ahead)."""
        return self._ahead.parallel if self._ahead is not None and self._ahead.enabled else 1

    def send_ahead(self, requests: list[LLMRequest]) -> None:
        """Send requests the search will (probably) make later (`acts_sql.engine.prefetch`):
        no more than the budget could still take, each bounded by the time left."""
        if self._ahead is None or not self._ahead.enabled or not requests:
            return
        room = self._budget.call_limit - self._budget.llm_calls - self._ahead.outstanding
        left = self._budget.remaining() - FINISH_RESERVE_SECONDS
        if room <= 0 or left <= FINISH_RESERVE_SECONDS:
            return
        timed = [
            self.constrained(r).model_copy(update={"timeout_s": min(left, r.timeout_s or left)})
            for r in requests
        ]
        self._ahead.send(timed, room)

    def complete(self, request: LLMRequest) -> LLMResponse:
        self._budget.take_llm_call()
        left = self._budget.time_left(FINISH_RESERVE_SECONDS) - FINISH_RESERVE_SECONDS
        by_run = request.timeout_s is None or left < request.timeout_s
        timeout = left if by_run else request.timeout_s
        request = self.constrained(request).model_copy(update={"timeout_s": timeout})
        try:
            ahead = self._ahead.take(request) if self._ahead is not None else None
            response = ahead if ahead is not None else self.inner.complete(request)
        except Exception as exc:
            first = isinstance(exc, LLMUnavailableError) and not self._ledger.calls
            if isinstance(exc, LLMUnavailableError) and first:
                exc.details["before_any_reply"] = True
            failed = LlmCallData(ok=False, error=str(exc), timeout_s=_rounded(timeout))
            if first:
                failed.before_any_reply = True
            self._trace.emit(
                failed, node=self._node, purpose=request.purpose, summary=f"error: {exc}"
            )
            if isinstance(exc, LLMDeadlineError) and by_run:
                raise self._budget.out_of_time() from exc
            raise
        usage = response.usage
        self._ledger.add(usage)
        extra: dict[str, Any] = (
            {"stopped_by": usage.stopped_by} if usage.stopped_by is not None else {}
        )
        if usage.decoder is not None:
            extra["decoder"] = usage.decoder
        if usage.steered:
            extra["steered"] = usage.steered
        if usage.constrained:
            extra["constrained"] = True
            extra["refused_tokens"] = usage.refused_tokens
        if request.temperature > 0:
            extra["temperature"] = request.temperature
        if ahead is not None:
            extra["sent_ahead"] = True
        self._trace.emit(
            LlmCallData(
                ok=True,
                prompt_tokens=usage.prompt_tokens,
                cached_prompt_tokens=usage.cached_prompt_tokens,
                completion_tokens=usage.completion_tokens,
                seconds=round(usage.seconds, 4),
                replayed=usage.replayed,
                response=response.text,
                timeout_s=_rounded(timeout),
                **extra,
            ),
            node=self._node,
            purpose=request.purpose,
            summary=(
                f"{usage.prompt_tokens}+{usage.completion_tokens} tokens, {usage.seconds:.2f} s"
                + (" (deadline: partial reply)" if usage.stopped_by == "deadline" else "")
            ),
        )
        return response


def _rounded(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds, 3)


def _record(trace: Trace, node: str | None, purpose: str, sql: str, result: ExecResult) -> None:
    trace.emit(
        StatementData(
            sql=sql,
            status=result.status,
            row_count=result.row_count,
            truncated=result.truncated,
            error=result.error,
            error_kind=result.error_kind,
            seconds=round(result.seconds, 6),
        ),
        node=node,
        purpose=purpose,
        summary=f"{result.status}, {result.row_count} row(s), {result.seconds * 1000:.1f} ms",
    )


class _TracedScratch:
    def __init__(
        self,
        inner: ScratchSession,
        trace: Trace,
        node: str | None,
        purpose: str,
        budget: BudgetTracker | None,
    ) -> None:
        self._inner, self._trace, self._node, self._purpose = inner, trace, node, purpose
        self._budget = budget

    def _check_time(self) -> None:
        if self._budget is not None:
            self._budget.time_left(MIN_STATEMENT_SECONDS)

    def create_stand_in(self, name: str, columns: list[str]) -> ExecResult:
        self._check_time()
        result = self._inner.create_stand_in(name, columns)
        _record(
            self._trace, self._node, "stand_in", f"stand-in {name}({', '.join(columns)})", result
        )
        return result

    def execute(self, sql: str, *, max_rows: int | None = None) -> ExecResult:
        self._check_time()
        result = self._inner.execute(sql, max_rows=max_rows)
        _record(self._trace, self._node, self._purpose, sql, result)
        return result


class TracedExecutor:
    """An Executor that records each statement with its node and purpose, and
    caps its timeout at what is left of the run (see the module doc)."""

    def __init__(
        self,
        inner: Executor,
        trace: Trace,
        node: str | None,
        purpose: str,
        *,
        budget: BudgetTracker | None,
    ) -> None:
        """`budget`: the run's (statements end within its wall time); None: no cap."""
        self.inner = inner
        self.dialect = inner.dialect
        self._trace, self._node, self._purpose = trace, node, purpose
        self._budget = budget
        self._isolates = _takes_isolate(inner)

    def execute(
        self,
        sql: str,
        *,
        max_rows: int | None = None,
        timeout: float | None = None,
        isolate: bool = True,
    ) -> ExecResult:
        """Run `sql` through the wrapped executor, isolated (see the module doc), and record it.

        `isolate` is there for the `Executor` protocol: the engine's statements are always
        isolated, so False is refused rather than silently ignored."""
        if not isolate:
            raise ValueError("the engine's statements always run isolated")
        if self._budget is not None:
            left = self._budget.time_left(MIN_STATEMENT_SECONDS)
            timeout = capped_timeout(
                sql, timeout, left, default=own_timeout(self.inner), dialect=self.dialect
            )
        if self._isolates:
            result = self.inner.execute(sql, max_rows=max_rows, timeout=timeout, isolate=True)
        else:
            result = self.inner.execute(sql, max_rows=max_rows, timeout=timeout)
        _record(self._trace, self._node, self._purpose, sql, result)
        return result

    @contextmanager
    def scratch(self) -> Iterator[ScratchSession]:
        with self.inner.scratch() as session:
            yield _TracedScratch(
                session, self._trace, self._node, f"{self._purpose}:unit", self._budget
            )

    def reflect(self, sample_rows: int = 3) -> list[TableInfo]:
        return self.inner.reflect(sample_rows)

    def database_executor(self) -> TracedExecutor:
        """The same recording over the database's own SQL executor, for SQL acts-sql writes
        itself, when the wrapped one runs a query language (`acts_sql.db.language`)."""
        database = database_executor(self.inner)
        if database is self.inner:
            return self
        return TracedExecutor(database, self._trace, self._node, self._purpose, budget=self._budget)

    def close(self) -> None:
        """The wrapped executor belongs to the caller; closing is theirs."""


def _takes_isolate(executor: Executor) -> bool:
    """Whether `executor.execute` accepts ``isolate`` (every built-in executor does)."""
    try:
        parameters = inspect.signature(executor.execute).parameters
    except (TypeError, ValueError):
        return True
    return "isolate" in parameters or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()
    )
