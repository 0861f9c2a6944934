"""The journal: writes queue without waiting, share commits under load, and ends wait."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from acts_sql.engine.events import TraceEvent
from acts_sql.server.models import RunState
from acts_sql.server.run import Run
from acts_sql.server.runs import RunRegistry
from acts_sql.server.store import RunJournal
from acts_sql.server.store.records import Created, Ended, Event
from server.test_runs import SPEC, result_with
from support import statement_event


class SlowStore:
    """Records each batch; the first write waits until `gate` is set."""

    description = "slow://test"

    def __init__(self, fail: bool = False) -> None:
        self.batches: list[list[Any]] = []
        self.gate = threading.Event()
        self.fail = fail
        self.closed = False

    def write(self, ops: list[Any]) -> None:
        self.gate.wait(5)
        if self.fail:
            raise OSError("disk full")
        self.batches.append(list(ops))

    def close(self) -> None:
        self.closed = True


def events(count: int) -> list[TraceEvent]:
    return [statement_event(seq) for seq in range(count)]


def test_events_queued_while_a_commit_runs_share_the_next_one():
    store = SlowStore()
    journal = RunJournal(store, max_batch=512)  # type: ignore[arg-type]
    durable: list[list[str]] = []
    journal.start(durable.append)
    run = Run(SPEC, hard_deadline_s=10)
    journal.created(run)
    time.sleep(0.1)  # the writer takes `created` and waits in its first write
    began = time.perf_counter()
    for event in events(100):
        assert run.add_event(event)
        journal.event(run.id, event)
    queued_in = time.perf_counter() - began
    store.gate.set()
    ending = run.settle(RunState.FAILED)
    assert ending is not None
    assert journal.ended(run, ending, wait=True) is True
    journal.close()
    assert queued_in < 0.1  # the run never waited for the store
    assert [len(b) for b in store.batches] == [1, 101]  # 100 events and the end: one commit
    written = [op.event.seq for op in store.batches[1] if isinstance(op, Event)]
    assert written == list(range(100))
    end = store.batches[1][-1]
    assert isinstance(end, Ended) and end.events == []  # every event was sent already
    assert durable == [[run.id]] and store.closed


def test_max_batch_1_commits_every_write_on_its_own():
    store = SlowStore()
    store.gate.set()
    journal = RunJournal(store, max_batch=1)  # type: ignore[arg-type]
    journal.start()
    run = Run(SPEC, hard_deadline_s=10)
    journal.created(run)
    for event in events(5):
        journal.event(run.id, event)
    journal.close()
    assert [len(b) for b in store.batches] == [1] * 6
    assert isinstance(store.batches[0][0], Created)


def test_an_end_whose_write_fails_is_not_reported_durable():
    store = SlowStore(fail=True)
    store.gate.set()
    journal = RunJournal(store)  # type: ignore[arg-type]
    durable: list[list[str]] = []
    journal.start(durable.append)
    run = Run(SPEC, hard_deadline_s=10)
    journal.created(run)
    ending = run.settle(RunState.FAILED)
    assert ending is not None
    assert journal.ended(run, ending, wait=True) is False
    journal.close()
    assert durable == []


def test_a_run_the_store_could_not_write_is_still_answered_from_memory():
    store = SlowStore(fail=True)
    store.gate.set()
    journal = RunJournal(store)  # type: ignore[arg-type]
    registry = RunRegistry(
        lambda spec, listener, asker: result_with([]),
        max_active=1,
        keep_finished=5,
        grace_seconds=0,
        journal=journal,
    )
    try:
        run = registry.submit(SPEC)
        asyncio.run(run.wait_done())
        assert run.state is RunState.FINISHED
        assert registry.get(run.id) is run  # not forgotten: the store does not have it
    finally:
        registry.close()
