"""The run registry: runs in a worker thread pool, their events, their results.

Owned by the app (``app.state.registry``); the only mutable state of the
service. A run keeps going whatever its clients do: a client that
disconnects can read the result later. Admission is non-blocking: beyond
`max_active` runs, `submit` raises ``too_many_runs`` (429) at once.

Runs in progress live here (see `acts_sql.server.run`); readers follow them
from memory. With a journal (a durable store), every run, its events and its
end are written to the store too, and an ended run leaves memory once its
end is committed: from then on it is read from the store, after a restart
too. Without one, the latest `keep_finished` ended runs (and none older than
`max_age_s`) stay in memory, and a restart forgets them.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from acts_sql.engine.choice import ChoiceAsker
from acts_sql.engine.events import TraceEvent
from acts_sql.engine.result import CorrectionResult
from acts_sql.errors import ActsSqlError, ConfigError, DatabaseOpenError, LLMError
from acts_sql.server.errors import ApiError, ErrorBody, ErrorCode
from acts_sql.server.models import RunState
from acts_sql.server.run import Run, RunSpec
from acts_sql.server.store import RunJournal

__all__ = ["Run", "RunRegistry", "RunSpec", "Work"]


Work = Callable[[RunSpec, Callable[[TraceEvent], None], ChoiceAsker | None], CorrectionResult]
"""Runs one spec to its result, calling the listener for each trace event, asking the asker
(with `ask`) between readings."""


class RunRegistry:
    """Admits, runs and keeps runs; see the module docstring."""

    def __init__(
        self,
        work: Work,
        *,
        max_active: int,
        keep_finished: int,
        grace_seconds: float,
        max_age_s: float | None = None,
        journal: RunJournal | None = None,
    ) -> None:
        self._work = work
        self.max_active = max_active
        self._keep_finished = keep_finished
        self._max_age_s = max_age_s
        self._grace = grace_seconds
        self._journal = journal
        self._pool = ThreadPoolExecutor(max_workers=max_active, thread_name_prefix="acts-sql-run")
        self._lock = threading.Lock()
        self._runs: OrderedDict[str, Run] = OrderedDict()
        self._active = 0
        self._closed = False
        if journal is not None:
            journal.start(self._forget)

    @property
    def journal(self) -> RunJournal | None:
        """The journal writing runs to the durable store; None: runs are kept in memory."""
        return self._journal

    @property
    def active(self) -> int:
        with self._lock:
            return self._active

    def submit(self, spec: RunSpec) -> Run:
        """Start a run now, or raise ApiError(too_many_runs) when all slots are taken."""
        run = Run(spec, hard_deadline_s=spec.options.budget.max_seconds + self._grace)
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
        if self._journal is not None:
            self._journal.created(run)
        try:
            self._pool.submit(self._execute, run)
        except RuntimeError:  # the pool was shut down meanwhile
            self._release()
            self._end(run, RunState.FAILED, _shutting_down("the service is shutting down"))
        return run

    def get(self, run_id: str) -> Run | None:
        """The run in memory, else from the store (None: no such run, or it expired)."""
        with self._lock:
            run = self._runs.get(run_id)
        if run is None and self._journal is not None:
            run = self._journal.store.load(run_id)
        return run

    def recent(self, limit: int) -> list[Run]:
        """The most recently created runs, newest first (those from the store by status)."""
        with self._lock:
            runs = list(reversed(self._runs.values()))
        if self._journal is not None:
            known = {run.id for run in runs}
            stored = self._journal.store.recent(limit)
            runs += [run for run in stored if run.id not in known]
            runs.sort(key=lambda run: run.created_at, reverse=True)
        return runs[:limit]

    def expire_overdue(self) -> int:
        """Mark runs past their hard deadline as timed out; how many were."""
        now = time.monotonic()
        with self._lock:
            runs = [r for r in self._runs.values() if r.overdue(now)]
        expired = 0
        for run in runs:
            budget = run.spec.options.budget.max_seconds
            message = (
                f"the run did not finish within its {budget:g} s budget (+{self._grace:g} s grace)"
            )
            error = ErrorBody(code=ErrorCode.RUN_TIMEOUT, message=message)
            expired += self._end(run, RunState.TIMED_OUT, error)
        return expired

    def close(self) -> None:
        """No new runs: queued ones fail, running ones are interrupted (their threads
        are left to end by themselves); the journal commits what it has and stops."""
        with self._lock:
            self._closed = True
            pending = [r for r in self._runs.values() if not r.done]
        self._pool.shutdown(wait=False, cancel_futures=True)
        for run in pending:
            if run.state is RunState.QUEUED:
                self._end(run, RunState.FAILED, _shutting_down("the service shut down"))
            else:
                message = "the service stopped while this run was in progress; it did not finish"
                self._end(run, RunState.INTERRUPTED, _shutting_down(message))
        if self._journal is not None:
            self._journal.close()

    def _listener(self, run: Run) -> Callable[[TraceEvent], None]:
        journal = self._journal

        def listener(event: TraceEvent) -> None:
            if run.add_event(event) and journal is not None:
                journal.event(run.id, event)

        return listener

    def _execute(self, run: Run) -> None:
        run.mark_running()
        outcome: CorrectionResult | ErrorBody
        try:
            outcome = self._work(run.spec, self._listener(run), run.choice)
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
        if isinstance(outcome, CorrectionResult):
            self._end(run, RunState.FINISHED, result=outcome, wait=True, release=True)
        else:
            self._end(run, RunState.FAILED, outcome, wait=True, release=True)

    def _end(
        self,
        run: Run,
        state: RunState,
        error: ErrorBody | None = None,
        *,
        result: CorrectionResult | None = None,
        wait: bool = False,
        release: bool = False,
    ) -> bool:
        """End the run (unless it has ended already): store it, then show it.

        With `wait` (a worker thread; never the event loop) the run is shown
        only once its end is committed, so whoever sees it finished finds it
        in the store after a restart. With `release` the run's slot is freed
        after that and before anyone can see the outcome, so a client that
        got its result may start the next run at once (and the worker thread
        is free for it: the pool has one per slot).
        """
        ending = run.settle(state, result=result, error=error)
        if ending is not None and self._journal is not None:
            self._journal.ended(run, ending, wait=wait)
        if release:
            self._release()
        if ending is None:
            return False
        run.publish()
        if self._journal is None:
            with self._lock:
                self._evict()
        return True

    def _forget(self, run_ids: list[str]) -> None:
        """The journal committed these runs' ends: the store answers for them now."""
        with self._lock:
            for run_id in run_ids:
                self._runs.pop(run_id, None)

    def _release(self) -> None:
        with self._lock:
            self._active -= 1

    def _evict(self) -> None:
        """Drop ended runs beyond `keep_finished` or older than `max_age_s`, oldest first."""
        ended = [r for r in self._runs.values() if r.done]
        doomed = ended[: max(0, len(ended) - self._keep_finished)]
        if self._max_age_s is not None:
            cutoff = time.time() - self._max_age_s
            doomed += [r for r in ended if r.created_at < cutoff]
        for run in doomed:
            self._runs.pop(run.id, None)


def _shutting_down(message: str) -> ErrorBody:
    return ErrorBody(code=ErrorCode.SHUTTING_DOWN, message=message)
