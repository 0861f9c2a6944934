"""Pools on this machine: worker threads of this process, or worker processes.

`ProcessPool` (``--executor local``) starts one process per worker (``spawn``:
a fresh interpreter, safe whatever threads this process runs), builds the
worker there once, and hands it one task at a time through its own pipe, so
the pool always knows which task a process holds: a process that dies takes
only that task with it, which is run once more on a fresh process. Ctrl-C
stops the workers with the run (they ignore SIGINT themselves and are ended
by the pool; one whose pool went away without a word reads the end of its
pipe and exits).

`ThreadPool` runs the workers as threads of this process: for jobs whose
workers share objects that cannot cross a process boundary (the benchmark's
evaluator and a backend object handed in by a caller).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import queue
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from multiprocessing.connection import Connection, wait
from multiprocessing.context import SpawnContext, SpawnProcess
from typing import Any

from acts_sql.scale.base import (
    Done,
    OnDone,
    Retries,
    WorkerSpec,
    WorkerStartError,
    describe,
    first_of,
)

POLL_SECONDS = 0.5
"""How often a waiting pool checks that its busy processes are still alive."""
STOP_SECONDS = 10.0
"""How long a worker process may take to close its worker before it is terminated."""

Item = tuple[str, Any]


class _Feed:
    """The items still to run: retries first, then the iterable, read only on demand."""

    def __init__(self, items: Iterable[Item]) -> None:
        self._source: Iterator[Item] = iter(items)
        self._again: deque[Item] = deque()
        self._lock = threading.Lock()
        self._closed = False

    def next(self) -> Item | None:
        with self._lock:
            if self._closed:
                return None
            if self._again:
                return self._again.popleft()
            return next(self._source, None)

    def again(self, item: Item) -> None:
        with self._lock:
            self._again.append(item)

    def close(self) -> None:
        """No more items (the run ended early): waits for an item being read."""
        with self._lock:
            self._closed = True


# --------------------------------------------------------------------------- threads


class _OneTaskPerWorker:
    """A pool whose workers hold one task each: `workers` in flight."""

    name = ""

    def __init__(self, workers: int = 1) -> None:
        self.workers = max(1, workers)

    @property
    def in_flight(self) -> int:
        return self.workers


class ThreadPool(_OneTaskPerWorker):
    """`workers` worker threads in this process, each with its own worker."""

    name = "threads"

    def run(self, spec: WorkerSpec, items: Iterable[Item], on_done: OnDone) -> None:
        feed = _Feed(items)
        retries = Retries()
        lock = threading.Lock()
        outcomes: queue.Queue[Done[Any] | BaseException | None] = queue.Queue()

        def slot() -> None:
            try:
                worker = spec.build()
            except Exception as exc:
                outcomes.put(WorkerStartError(f"a worker could not start: {describe(exc)}"))
                return
            try:
                while (item := feed.next()) is not None:
                    key, payload = item
                    with lock:
                        retries.start(key)
                    try:
                        value = worker.run(payload)
                    except Exception as exc:
                        with lock:
                            failed = retries.failed(key, describe(exc))
                        if failed is None:
                            feed.again(item)
                        else:
                            outcomes.put(failed)
                        continue
                    with lock:
                        outcomes.put(retries.done(key, value))
            finally:
                worker.close()
                outcomes.put(None)

        threads = [
            threading.Thread(target=slot, name=f"worker-{i}", daemon=True)
            for i in range(self.workers)
        ]
        for thread in threads:
            thread.start()
        running = len(threads)
        try:
            while running:
                outcome = outcomes.get()
                if outcome is None:
                    running -= 1
                elif isinstance(outcome, BaseException):
                    raise outcome
                else:
                    on_done(outcome)
        finally:
            feed.close()  # a run that ends early: the threads take no new item


# ------------------------------------------------------------------------- processes


def _serve(spec: WorkerSpec, conn: Connection) -> None:
    """A worker process: build the worker, then run what comes in until None."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the pool ends its processes itself
    try:
        worker = spec.build()
    except BaseException as exc:
        conn.send(("broken", describe(exc)))
        return
    conn.send(("ready", None))
    try:
        while (item := _receive_item(conn)) is not None:
            key, payload = item
            try:
                conn.send(("done", (key, worker.run(payload), None)))
            except Exception as exc:
                conn.send(("done", (key, None, describe(exc))))
    finally:
        worker.close()


def _receive_item(conn: Connection) -> Item | None:
    try:
        item: Item | None = conn.recv()
    except EOFError:  # the pool is gone
        return None
    return item


@dataclass
class _Slot:
    """One worker process and the pipe it talks through (its own: a process that dies
    mid-message cannot block the others, as it could on a shared queue)."""

    process: SpawnProcess
    conn: Connection
    ready: bool = False
    item: Item | None = None

    @classmethod
    def start(cls, context: SpawnContext, spec: WorkerSpec, index: int) -> _Slot:
        mine, theirs = context.Pipe(duplex=True)
        process = context.Process(
            target=_serve, args=(spec, theirs), name=f"acts-sql-worker-{index}"
        )
        process.start()
        theirs.close()
        return cls(process=process, conn=mine)

    @property
    def idle(self) -> bool:
        return self.ready and self.item is None and self.process.is_alive()

    def messages(self) -> Iterator[tuple[str, Any]]:
        """What the process has sent so far."""
        with contextlib.suppress(EOFError, OSError):
            while self.conn.poll():
                yield self.conn.recv()


class ProcessPool(_OneTaskPerWorker):
    """`workers` processes on this machine, each with its own worker (see the module doc)."""

    name = "local"

    def run(self, spec: WorkerSpec, items: Iterable[Item], on_done: OnDone) -> None:
        pending = first_of(items)
        if pending is None:
            return
        context = multiprocessing.get_context("spawn")
        slots = [_Slot.start(context, spec, i) for i in range(self.workers)]
        finished = False
        try:
            _Dispatch(slots, _Feed(pending), on_done, partial(_Slot.start, context, spec)).loop()
            finished = True
        finally:
            _stop(slots, wait=finished)


class _Dispatch:
    """One run of a ProcessPool: hand out items, collect outcomes, replace lost processes."""

    def __init__(
        self, slots: list[_Slot], feed: _Feed, on_done: OnDone, start: Callable[[int], _Slot]
    ) -> None:
        self.slots, self.feed, self.on_done, self.start = slots, feed, on_done, start
        self.retries = Retries()
        self.exhausted = False

    def loop(self) -> None:
        while True:
            self._hand_out()
            if self.exhausted and not any(s.item for s in self.slots):
                return
            waits = [s.conn for s in self.slots] + [s.process.sentinel for s in self.slots]
            wait(waits, timeout=POLL_SECONDS)
            for index, slot in enumerate(self.slots):
                for message in slot.messages():
                    self._receive(slot, message)
                if not slot.process.is_alive():
                    self._lost(index, slot)

    def _hand_out(self) -> None:
        for slot in self.slots:
            if self.exhausted or not slot.idle:
                continue
            item = self.feed.next()
            if item is None:
                self.exhausted = True
                return
            self.retries.start(item[0])
            slot.item = item
            slot.conn.send(item)

    def _receive(self, slot: _Slot, message: tuple[str, Any]) -> None:
        kind, data = message
        if kind == "broken":
            raise WorkerStartError(f"a worker process could not start: {data}")
        if kind == "ready":
            slot.ready = True
            return
        key, value, error = data
        if slot.item is None or slot.item[0] != key:
            return
        item, slot.item = slot.item, None
        if error is None:
            self.on_done(self.retries.done(key, value))
        else:
            self._failed(item, error)

    def _failed(self, item: Item, why: str) -> None:
        outcome = self.retries.failed(item[0], why)
        if outcome is None:
            self.feed.again(item)
            self.exhausted = False
        else:
            self.on_done(outcome)

    def _lost(self, index: int, slot: _Slot) -> None:
        """A process that died: a fresh one in its place, and its task runs again."""
        slot.process.join(0)
        code = slot.process.exitcode
        slot.conn.close()
        if not slot.ready:
            raise WorkerStartError(f"a worker process died while it started (exit code {code})")
        self.slots[index] = self.start(index)
        if slot.item is not None:
            self._failed(slot.item, f"the worker process died (exit code {code})")


def _stop(slots: list[_Slot], *, wait: bool) -> None:
    """Ask every worker process to finish (`wait`: the run is done, they are idle and close
    their workers), then end those that do not; a run that failed or was interrupted ends
    them at once (their tasks are not finished anyway)."""
    for slot in slots:
        with contextlib.suppress(OSError, ValueError):
            slot.conn.send(None)
    deadline = time.monotonic() + (STOP_SECONDS if wait else 0.0)
    for slot in slots:
        slot.process.join(max(0.0, deadline - time.monotonic()))
        if slot.process.is_alive():
            slot.process.terminate()
            slot.process.join(STOP_SECONDS)
        slot.conn.close()


__all__ = ["ProcessPool", "ThreadPool"]
