"""The run registry: runs in a worker thread pool, their events, their results.

Owned by the app (``app.state.registry``); the only mutable state of the
service. A run keeps going whatever its clients do: a client that
disconnects can read the result later. Admission is non-blocking: beyond
`max_active` runs, `submit` raises ``too_many_runs`` (429) at once.

Events reach the run from the worker thread (and from the engine's own
threads) in any order; each is stored at its ``seq``, and readers only ever
see the gap-free prefix, so a stream is complete and in order. When the run
finishes, the result's trace (the authoritative list) replaces them.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal

from acts_sql.engine.result import CorrectionResult
from acts_sql.engine.trace import TraceEvent
from acts_sql.errors import ActsSqlError, ConfigError, DatabaseOpenError, LLMError
from acts_sql.server.auth import new_view_key
from acts_sql.server.errors import ApiError, ErrorBody, ErrorCode
from acts_sql.server.models import TERMINAL_STATES, RunState


@dataclass(frozen=True)
class RunSpec:
    """What to run: validated against the configuration before it is submitted."""

    kind: Literal["correct", "generate"]
    database: str
    question: str
    sql: str | None
    method: str
    dialect: str | None
    max_llm_calls: int
    max_nodes: int
    max_depth: int
    max_seconds: float
    execution_tools: bool = True
    ambiguity_detection: bool = True
    candidates: int | None = None
    temperature: float | None = None


class Run:
    """One run: state, events (by seq), result or error. Thread-safe."""

    def __init__(self, spec: RunSpec, *, hard_deadline_s: float) -> None:
        self.id = uuid.uuid4().hex
        self.view_key = new_view_key()
        self.spec = spec
        self.created_at = time.time()
        self.started_at: float | None = None
        self.finished_at: float | None = None
        self._deadline = time.monotonic() + hard_deadline_s
        self._lock = threading.Lock()
        self._state = RunState.QUEUED
        self._events: list[TraceEvent | None] = []
        self._ready = 0
        self._version = 0
        self._waiters: list[asyncio.Future[None]] = []
        self.result: CorrectionResult | None = None
        self.error: ErrorBody | None = None

    # -- reading -----------------------------------------------------------------

    @property
    def state(self) -> RunState:
        with self._lock:
            return self._state

    @property
    def done(self) -> bool:
        return self.state in TERMINAL_STATES

    @property
    def event_count(self) -> int:
        with self._lock:
            return self._ready

    @property
    def version(self) -> int:
        with self._lock:
            return self._version

    def events_from(self, start: int) -> tuple[list[TraceEvent], bool]:
        """The gap-free events from `start` on, and whether no more will come."""
        with self._lock:
            ready = [e for e in self._events[start : self._ready] if e is not None]
            return ready, self._state in TERMINAL_STATES

    # -- writing (worker thread) -------------------------------------------------

    def add_event(self, event: TraceEvent) -> None:
        """The engine's listener: store the event at its seq and wake readers."""
        with self._lock:
            if self._state in TERMINAL_STATES:
                return
            if event.seq >= len(self._events):
                self._events.extend([None] * (event.seq + 1 - len(self._events)))
            self._events[event.seq] = event
            while self._ready < len(self._events) and self._events[self._ready] is not None:
                self._ready += 1
            waiters = self._bump()
        _wake(waiters)

    def mark_running(self) -> None:
        with self._lock:
            if self._state is RunState.QUEUED:
                self._state = RunState.RUNNING
                self.started_at = time.time()
            waiters = self._bump()
        _wake(waiters)

    def finish(self, result: CorrectionResult) -> None:
        with self._lock:
            if self._state in TERMINAL_STATES:
                return
            self.result = result
            self._events = list(result.trace)
            self._ready = len(self._events)
            waiters = self._end(RunState.FINISHED)
        _wake(waiters)

    def fail(self, error: ErrorBody, state: RunState = RunState.FAILED) -> bool:
        with self._lock:
            if self._state in TERMINAL_STATES:
                return False
            self.error = error
            waiters = self._end(state)
        _wake(waiters)
        return True

    def overdue(self, now: float) -> bool:
        return now > self._deadline and not self.done

    def _end(self, state: RunState) -> list[asyncio.Future[None]]:
        self._state = state
        self.finished_at = time.time()
        return self._bump()

    def _bump(self) -> list[asyncio.Future[None]]:
        self._version += 1
        waiters, self._waiters = self._waiters, []
        return waiters

    # -- waiting (event loop) ----------------------------------------------------

    async def wait_changed(self, since_version: int, timeout: float) -> bool:
        """Wait until the run changes after `since_version`; False on time-out."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        with self._lock:
            if self._version != since_version:
                return True
            self._waiters.append(future)
        try:
            await asyncio.wait_for(future, timeout)
            return True
        except TimeoutError:
            return False
        finally:
            with self._lock, contextlib.suppress(ValueError):
                self._waiters.remove(future)

    async def wait_done(self) -> None:
        """Wait until the run is finished, failed or timed out (never cancels it)."""
        while True:
            version = self.version
            if self.done:
                return
            await self.wait_changed(version, 5.0)


def _wake(waiters: list[asyncio.Future[None]]) -> None:
    for future in waiters:
        with contextlib.suppress(RuntimeError):  # the loop has closed
            future.get_loop().call_soon_threadsafe(_resolve, future)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


Work = Callable[[RunSpec, Callable[[TraceEvent], None]], CorrectionResult]
"""Runs one spec to its result, calling the listener for each trace event."""


class RunRegistry:
    """Admits, runs and keeps runs; see the module docstring."""

    def __init__(
        self,
        work: Work,
        *,
        max_active: int,
        keep_finished: int,
        grace_seconds: float,
    ) -> None:
        self._work = work
        self.max_active = max_active
        self._keep_finished = keep_finished
        self._grace = grace_seconds
        self._pool = ThreadPoolExecutor(max_workers=max_active, thread_name_prefix="acts-sql-run")
        self._lock = threading.Lock()
        self._runs: OrderedDict[str, Run] = OrderedDict()
        self._active = 0
        self._closed = False

    @property
    def active(self) -> int:
        with self._lock:
            return self._active

    def submit(self, spec: RunSpec) -> Run:
        """Start a run now, or raise ApiError(too_many_runs) when all slots are taken."""
        run = Run(spec, hard_deadline_s=spec.max_seconds + self._grace)
        with self._lock:
            if self._closed:
                raise ApiError(ErrorCode.SHUTTING_DOWN, "the service is shutting down")
            if self._active >= self.max_active:
                raise ApiError(
                    ErrorCode.TOO_MANY_RUNS,
                    f"{self._active} runs are in progress, the most this service runs at once; "
                    "retry later",
                    headers={"Retry-After": "1"},
                )
            self._active += 1
            self._runs[run.id] = run
            self._evict()
        try:
            self._pool.submit(self._execute, run)
        except RuntimeError:  # the pool was shut down meanwhile
            self._release()
            run.fail(
                ErrorBody(code=ErrorCode.SHUTTING_DOWN, message="the service is shutting down")
            )
        return run

    def get(self, run_id: str) -> Run | None:
        with self._lock:
            return self._runs.get(run_id)

    def recent(self, limit: int) -> list[Run]:
        with self._lock:
            return list(reversed(self._runs.values()))[:limit]

    def expire_overdue(self) -> int:
        """Mark runs past their hard deadline as timed out; how many were."""
        now = time.monotonic()
        with self._lock:
            runs = [r for r in self._runs.values() if r.overdue(now)]
        expired = 0
        for run in runs:
            message = (
                f"the run did not finish within its {run.spec.max_seconds:g} s budget "
                f"(+{self._grace:g} s grace)"
            )
            if run.fail(ErrorBody(code=ErrorCode.RUN_TIMEOUT, message=message), RunState.TIMED_OUT):
                expired += 1
        return expired

    def close(self) -> None:
        """No new runs; running ones are left to finish in their threads, queued ones fail."""
        with self._lock:
            self._closed = True
            queued = [r for r in self._runs.values() if r.state is RunState.QUEUED]
        self._pool.shutdown(wait=False, cancel_futures=True)
        for run in queued:
            run.fail(ErrorBody(code=ErrorCode.SHUTTING_DOWN, message="the service shut down"))

    def _execute(self, run: Run) -> None:
        run.mark_running()
        outcome: CorrectionResult | ErrorBody
        try:
            outcome = self._work(run.spec, run.add_event)
        except ApiError as exc:
            outcome = exc.body()
        except DatabaseOpenError as exc:
            outcome = ErrorBody(code=ErrorCode.DATABASE_UNAVAILABLE, message=str(exc))
        except ConfigError as exc:
            outcome = ErrorBody(code=ErrorCode.BAD_INPUT, message=str(exc))
        except LLMError as exc:
            outcome = ErrorBody(code=ErrorCode.LLM_UNAVAILABLE, message=str(exc))
        except ActsSqlError as exc:
            outcome = ErrorBody(code=ErrorCode.BAD_INPUT, message=str(exc))
        except Exception as exc:  # a bug: report it on the run, keep the service up
            outcome = ErrorBody(
                code=ErrorCode.INTERNAL_ERROR, message=f"internal error ({type(exc).__name__})"
            )
        # free the slot before anyone can see the outcome, so that a client that
        # got its result may start the next run at once
        self._release()
        if isinstance(outcome, CorrectionResult):
            run.finish(outcome)
        else:
            run.fail(outcome)
        with self._lock:
            self._evict()

    def _release(self) -> None:
        with self._lock:
            self._active -= 1

    def _evict(self) -> None:
        finished = [r for r in self._runs.values() if r.done]
        for run in finished[: max(0, len(finished) - self._keep_finished)]:
            del self._runs[run.id]
