"""One run: what it runs, its state, its events (by seq), its result or error.

Events reach a run from the worker thread (and from the engine's own
threads) in any order; each is stored at its ``seq``, and readers only ever
see the gap-free prefix, so a stream is complete and in order. When the run
finishes, the result's trace (the authoritative list) replaces them.

A run ends in two steps: `settle` claims the end (the first caller wins, so
a run that times out while its work returns is ended once), then `publish`
makes it visible and wakes the readers. Between the two the registry writes
the end to the store, so a client that sees a run finished can find it there
after a restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Literal

from acts_sql.engine.choice import ChoiceSlot
from acts_sql.engine.events import TraceEvent
from acts_sql.engine.options import CorrectionOptions
from acts_sql.engine.result import CorrectionResult
from acts_sql.server.auth import new_view_key
from acts_sql.server.errors import ErrorBody
from acts_sql.server.models import TERMINAL_STATES, RunState


@dataclass(frozen=True)
class RunSpec:
    """What to run: validated against the configuration before it is submitted."""

    kind: Literal["correct", "generate"]
    database: str
    question: str
    sql: str | None
    dialect: str | None
    options: CorrectionOptions
    """Within the service's limits: every budget limit is set."""
    language: str | None = None
    ask: bool = False
    """The run may ask the person between readings (`Run.choice`)."""


@dataclass(frozen=True)
class Settlement:
    """How a run ended: what `publish` makes visible and the store keeps."""

    state: RunState
    finished_at: float
    events: list[TraceEvent]
    """All of the run's events: the result's trace, or the gap-free prefix so far."""
    result: CorrectionResult | None = None
    error: ErrorBody | None = None


class Run:
    """One run: state, events (by seq), result or error. Thread-safe."""

    def __init__(
        self,
        spec: RunSpec,
        *,
        hard_deadline_s: float,
        run_id: str | None = None,
        view_key: str | None = None,
        created_at: float | None = None,
    ) -> None:
        self.id = run_id or uuid.uuid4().hex
        self.view_key = view_key or new_view_key()
        self.spec = spec
        self.choice = ChoiceSlot() if spec.ask else None
        """Where the run waits for `POST /v1/runs/{id}/choice` (with `spec.ask`)."""
        self.created_at = time.time() if created_at is None else created_at
        self.started_at: float | None = None
        self.finished_at: float | None = None
        self._deadline = time.monotonic() + hard_deadline_s
        self._lock = threading.Lock()
        self._state = RunState.QUEUED
        self._settlement: Settlement | None = None
        self._events: list[TraceEvent | None] = []
        self._ready = 0
        self._version = 0
        self._waiters: list[asyncio.Future[None]] = []
        self.result: CorrectionResult | None = None
        self.error: ErrorBody | None = None

    @classmethod
    def ended(
        cls,
        spec: RunSpec,
        ending: Settlement,
        *,
        run_id: str,
        view_key: str,
        created_at: float,
        started_at: float | None,
        event_count: int | None = None,
    ) -> Run:
        """A run that ended before (read back from the store).

        `event_count` without events is a run listed by its status only.
        """
        run = cls(spec, hard_deadline_s=0, run_id=run_id, view_key=view_key, created_at=created_at)
        run.started_at = started_at
        run._settlement = ending
        run._publish(ending)
        if event_count is not None:
            run._ready = event_count
        return run

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

    def add_event(self, event: TraceEvent) -> bool:
        """The engine's listener: store the event at its seq and wake readers.

        False (and nothing changes) once the run's end is settled.
        """
        with self._lock:
            if self._settlement is not None:
                return False
            if event.seq >= len(self._events):
                self._events.extend([None] * (event.seq + 1 - len(self._events)))
            self._events[event.seq] = event
            while self._ready < len(self._events) and self._events[self._ready] is not None:
                self._ready += 1
            waiters = self._bump()
        _wake(waiters)
        return True

    def mark_running(self) -> None:
        with self._lock:
            if self._state is RunState.QUEUED:
                self._state = RunState.RUNNING
                self.started_at = time.time()
            waiters = self._bump()
        _wake(waiters)

    def settle(
        self,
        state: RunState,
        *,
        result: CorrectionResult | None = None,
        error: ErrorBody | None = None,
    ) -> Settlement | None:
        """Claim the run's end; None when it was already claimed. See `publish`."""
        with self._lock:
            if self._settlement is not None:
                return None
            if result is not None:
                events = list(result.trace)
            else:
                events = [e for e in self._events[: self._ready] if e is not None]
            self._settlement = Settlement(state, time.time(), events, result, error)
            return self._settlement

    def publish(self) -> None:
        """Make the settled end visible and wake every reader."""
        with self._lock:
            ending = self._settlement
            if ending is None or self._state in TERMINAL_STATES:
                return
            waiters = self._publish(ending)
        _wake(waiters)

    def finish(self, result: CorrectionResult) -> None:
        if self.settle(RunState.FINISHED, result=result) is not None:
            self.publish()

    def fail(self, error: ErrorBody, state: RunState = RunState.FAILED) -> bool:
        if self.settle(state, error=error) is None:
            return False
        self.publish()
        return True

    def overdue(self, now: float) -> bool:
        with self._lock:
            return now > self._deadline and self._settlement is None

    def _publish(self, ending: Settlement) -> list[asyncio.Future[None]]:
        self.result = ending.result
        self.error = ending.error
        self._events = list(ending.events)
        self._ready = len(self._events)
        self._state = ending.state
        self.finished_at = ending.finished_at
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
