"""Requests sent ahead (``--parallel N``): the waiting overlaps, the decisions do not move.

A correction is a sequence of decisions, each one LLM call whose prompt may
depend on the replies before it. Some calls are known before the search asks
for them, and on an endpoint that serves parallel requests they can be
waiting at the same time as the call in hand:

- the plan, while the raw single-turn rewrite (the run's first call) is written;
- at a node with several open branches, the first call of each branch (its
  ``generate_sql`` greedy draw, or its ``detect_ambiguities``), while the agent
  chooses among them, and while the chosen branch is written and judged;
- the samples of a pool, while its greedy answer is written; the samples of
  ``vote`` likewise.

What is sent ahead is the exact request the search would send later, found by
running the code that builds it against :class:`CaptureLLM` (which stops it at
its first call) or by a pool's ``preview``. A call of the search takes the
reply of a request sent ahead only when its request is identical (purpose,
messages, schema, temperature, seed, max_tokens; not its deadline, nor the SQL
to avoid, which only a local model acts on); otherwise
it is sent as usual. So the search makes the same calls in the same order,
and each is charged to the budget and recorded in the trace when the search
makes it: with a backend whose reply depends only on the request, the result,
the tree and the trace are those of a sequential run (timings aside). A
request sent ahead that the search never makes (a branch not taken) costs an
endpoint call and changes nothing; `UsageSummary.unused_prefetches` counts them.

An `OrderedReplies` backend (the scripted one, whose replies go by order, not
by request) only waits out its latency ahead; its reply is taken when the
search makes the call, in the search's order. A backend that wraps one (a
cache over a scripted backend) is not sent anything ahead.

At most ``parallel - 1`` requests sent ahead are in flight at once (the
search's own call is the N-th); more wait their turn, and one still waiting
when the search asks for it is withdrawn and sent as usual.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import partial
from typing import Any

from acts_sql.db.executor import ScratchSession, TableInfo
from acts_sql.db.result import ExecResult
from acts_sql.llm.base import LLMBackend, LLMRequest, LLMResponse, OrderedReplies
from acts_sql.llm.cache import request_key

REMOTE_PARALLEL = 4
"""`--parallel` of an OpenAI-compatible endpoint when not given; 1 for the others."""


def default_parallel(llm_name: str) -> int:
    """Requests in flight at once when the user does not say: an endpoint serves several,
    a local model (one process, one context) and a scripted backend one."""
    return REMOTE_PARALLEL if llm_name.startswith("openai") else 1


class Captured(BaseException):
    """Stops the code that builds a request at its first call. A BaseException, so that
    no ``except Exception`` on the way (a tool guarding its own failures) swallows it."""

    def __init__(self, request: LLMRequest | None) -> None:
        super().__init__("captured")
        self.request = request


class CaptureLLM:
    """A backend that answers nothing: its first request is raised as `Captured`."""

    def __init__(self, name: str) -> None:
        self.name = name

    def complete(self, request: LLMRequest) -> LLMResponse:
        raise Captured(request)


class NoExecution:
    """An executor for predictions: code that would run a statement before its first LLM
    call is stopped there (no prediction), so a prediction never touches the database."""

    def __init__(self, dialect: str) -> None:
        self.dialect = dialect

    def execute(
        self,
        sql: str,
        *,
        max_rows: int | None = None,
        timeout: float | None = None,
        isolate: bool = False,
    ) -> ExecResult:
        raise Captured(None)

    def scratch(self) -> AbstractContextManager[ScratchSession]:
        raise Captured(None)

    def reflect(self, sample_rows: int = 3) -> list[TableInfo]:
        raise Captured(None)

    def close(self) -> None:
        """Nothing to close."""


def first_request(build: Callable[[LLMBackend], object], name: str) -> LLMRequest | None:
    """The first request `build` sends to the backend it is given; None when it sends
    none, runs a statement first, or fails before."""
    try:
        build(CaptureLLM(name))
    except Captured as stop:
        return stop.request
    except Exception:  # a prediction that cannot be made is only a missed overlap
        return None
    return None


class _DaemonThreads:
    """A few daemon threads that run submitted calls: unlike a ThreadPoolExecutor's, they
    never keep the interpreter from exiting (Ctrl-C during a run must not wait for an
    endpoint that does not answer a request sent ahead)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._jobs: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]] | None] = (
            queue.SimpleQueue()
        )
        self._threads: list[threading.Thread] = []

    def submit(self, call: Callable[[], Any]) -> Future[Any]:
        future: Future[Any] = Future()
        self._jobs.put((future, call))
        if len(self._threads) < self._size:
            thread = threading.Thread(target=self._work, name="llm-ahead", daemon=True)
            self._threads.append(thread)
            thread.start()
        return future

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            future, call = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(call())
            except BaseException as exc:
                future.set_exception(exc)

    def shutdown(self) -> None:
        """Cancel what has not started; the threads end after their current call."""
        while True:
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                break
            if job is not None:
                job[0].cancel()
        for _ in self._threads:
            self._jobs.put(None)


@dataclass
class _Ahead:
    request: LLMRequest
    future: Future[Any]


@dataclass(frozen=True)
class PrefetchStats:
    sent: int = 0
    used: int = 0

    @property
    def unused(self) -> int:
        return self.sent - self.used


def _ordered_inside(backend: LLMBackend) -> bool:
    """Whether a wrapper (a cache) holds an `OrderedReplies` backend somewhere inside."""
    inner = getattr(backend, "inner", None)
    while inner is not None:
        if isinstance(inner, OrderedReplies):
            return True
        inner = getattr(inner, "inner", None)
    return False


class Prefetcher:
    """The requests of one run sent ahead, by key (see the module doc). Thread-safe."""

    def __init__(self, backend: LLMBackend, parallel: int) -> None:
        self.backend = backend
        self.parallel = parallel
        self.ordered = isinstance(backend, OrderedReplies)
        self.enabled = parallel > 1 and (self.ordered or not _ordered_inside(backend))
        self._pool = _DaemonThreads(parallel - 1) if self.enabled else None
        self._ahead: dict[str, _Ahead] = {}
        self._lock = threading.Lock()
        self._sent = 0
        self._used = 0

    def key(self, request: LLMRequest) -> str:
        """What a request sent ahead must share with the search's: everything the cache
        keys on but ``avoid``, which the backends that take requests ahead (endpoints) do
        not act on, and which grows while a request waits (a branch run first drops SQL)."""
        return request_key(self.backend.name, request.model_copy(update={"avoid": None}))

    @property
    def outstanding(self) -> int:
        """Requests sent ahead and not used (yet)."""
        with self._lock:
            return len(self._ahead)

    def send(self, requests: list[LLMRequest], room: int) -> int:
        """Send `requests` ahead, in order, at most `room` new ones; how many were sent."""
        if self._pool is None:
            return 0
        sent = 0
        with self._lock:
            for request in requests:
                if sent >= room:
                    break
                key = self.key(request)
                if key in self._ahead:
                    continue
                future = self._pool.submit(partial(self._wait, request))
                self._ahead[key] = _Ahead(request, future)
                sent += 1
            self._sent += sent
        return sent

    def _wait(self, request: LLMRequest) -> tuple[float, LLMResponse | None]:
        """In a worker thread: the call (or, ordered, its latency); with its seconds."""
        started = time.perf_counter()
        if isinstance(self.backend, OrderedReplies):
            self.backend.simulate_latency(request)
            return time.perf_counter() - started, None
        return time.perf_counter() - started, self.backend.complete(request)

    def take(self, request: LLMRequest) -> LLMResponse | None:
        """The reply to `request` if it was sent ahead (waiting for it if needed); None when
        it was not, was still waiting its turn (withdrawn), or failed: then the caller
        sends it as usual, as a sequential run would."""
        if self._pool is None:
            return None
        with self._lock:
            ahead = self._ahead.pop(self.key(request), None)
        if ahead is None or ahead.future.cancel():
            if ahead is not None:
                with self._lock:
                    self._sent -= 1  # withdrawn before it was sent: it cost nothing
            return None
        try:
            seconds, response = ahead.future.result()
        except Exception:
            return None
        with self._lock:
            self._used += 1
        if response is None and isinstance(self.backend, OrderedReplies):
            return self.backend.reply(request, seconds=seconds)
        return response

    def close(self) -> PrefetchStats:
        """Withdraw what waits its turn; what is in flight finishes in the background."""
        if self._pool is not None:
            with self._lock:
                for ahead in self._ahead.values():
                    if ahead.future.cancel():
                        self._sent -= 1
                self._ahead.clear()
            self._pool.shutdown()
        return PrefetchStats(sent=self._sent, used=self._used)


__all__ = [
    "REMOTE_PARALLEL",
    "CaptureLLM",
    "Captured",
    "NoExecution",
    "PrefetchStats",
    "Prefetcher",
    "default_parallel",
    "first_request",
]
