"""The journal: runs written to the store from one background thread, in batches.

Runs never wait for the store while they run: `created` and `event` only
queue the write. The writer thread takes everything queued (up to
`max_batch` writes) and commits it in one transaction, so under load many
events share a commit and when idle each is committed at once. `ended`
queues a run's end after its events; with ``wait=True`` it returns once
that is committed, so a run is in the store before anyone sees it finished.

A write that fails is logged and dropped; the runs it ended are not
reported durable, so the registry keeps them in memory.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable

from acts_sql.engine.events import TraceEvent
from acts_sql.server.run import Run, Settlement
from acts_sql.server.store.records import Created, Ended, Event, Op, Receipt
from acts_sql.server.store.sql import SqlRunStore

log = logging.getLogger("acts_sql.server.store")

END_WAIT_S = 30.0
"""How long a run's end waits for its commit before the run is shown anyway."""
CLOSE_WAIT_S = 10.0

_STOP = object()


class RunJournal:
    """See the module docstring. `start` it; `close` it to flush and stop."""

    def __init__(self, store: SqlRunStore, *, max_batch: int = 512) -> None:
        self.store = store
        self._max_batch = max_batch
        self._queue: queue.SimpleQueue[Op | object] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._sent: dict[str, set[int]] = {}
        self._closed = False
        self._on_durable: Callable[[list[str]], None] | None = None
        self._thread = threading.Thread(target=self._loop, name="acts-sql-store", daemon=True)
        self.commits = 0
        """Transactions committed so far."""
        self.writes = 0
        """Writes (runs created, events, ends) committed so far."""
        self.writer_cpu_s = 0.0
        """CPU time the writer thread spent writing (scripts/store_overhead.py)."""

    def start(self, on_durable: Callable[[list[str]], None] | None = None) -> None:
        """Start writing; `on_durable(run_ids)` hears of runs whose end is committed."""
        self._on_durable = on_durable
        self._thread.start()

    # -- queueing (any thread) ---------------------------------------------------

    def created(self, run: Run) -> None:
        with self._lock:
            if self._closed:
                return
            self._sent[run.id] = set()
        self._queue.put(Created(run))

    def event(self, run_id: str, event: TraceEvent) -> None:
        with self._lock:
            sent = self._sent.get(run_id)
            if sent is None:  # closed, or the run's end is queued already
                return
            sent.add(event.seq)
        self._queue.put(Event(run_id, event))

    def ended(self, run: Run, ending: Settlement, *, wait: bool) -> bool:
        """Queue the run's end; with `wait`, True once it is committed."""
        with self._lock:
            if self._closed:
                return False
            sent = self._sent.pop(run.id, set())
        missing = [e for e in ending.events if e.seq not in sent]
        receipt = Receipt() if wait else None
        self._queue.put(Ended(run, ending, missing, receipt))
        if receipt is None:
            return True
        return receipt.event.wait(END_WAIT_S) and receipt.ok

    def close(self) -> None:
        """Commit what is queued, stop the writer, close the store."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._sent.clear()
        self._queue.put(_STOP)
        if self._thread.is_alive():
            self._thread.join(CLOSE_WAIT_S)
        if self._thread.is_alive():
            log.error("the run store did not finish writing within %g s", CLOSE_WAIT_S)
            return
        self.store.close()

    # -- writing (the writer thread) ---------------------------------------------

    def _loop(self) -> None:
        while True:
            batch, stop = self._next_batch()
            if batch:
                self._commit(batch)
            if stop:
                return

    def _next_batch(self) -> tuple[list[Op], bool]:
        first = self._queue.get()
        if first is _STOP:
            return [], True
        batch: list[Op] = [first]  # type: ignore[list-item]
        while len(batch) < self._max_batch:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is _STOP:
                return batch, True
            batch.append(item)  # type: ignore[arg-type]
        return batch, False

    def _commit(self, batch: list[Op]) -> None:
        ended = [op for op in batch if isinstance(op, Ended)]
        began = time.thread_time()
        try:
            self.store.write(batch)
            ok = True
            self.commits += 1
            self.writes += len(batch)
        except Exception:  # the store failed; the service goes on without it
            where, count = self.store.description, len(batch)
            log.exception("the run store %s could not write %d changes", where, count)
            ok = False
        self.writer_cpu_s += time.thread_time() - began
        if ok and ended and self._on_durable is not None:
            self._on_durable([op.run.id for op in ended])
        for op in ended:
            if op.receipt is not None:
                op.receipt.ok = ok
                op.receipt.event.set()
