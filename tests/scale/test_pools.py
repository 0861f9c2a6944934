"""The pools of this machine: one worker per slot, retries, lost processes, backpressure."""

from __future__ import annotations

import os

import pytest

from acts_sql.scale.base import MAX_ATTEMPTS, WorkerStartError
from acts_sql.scale.local import ProcessPool, ThreadPool
from pool_workers import Doubling


def run(pool, spec, items):
    done = []
    pool.run(spec, items, done.append)
    return {d.key: d for d in done}


@pytest.mark.parametrize("pool", [ThreadPool(2), ProcessPool(2)], ids=["threads", "processes"])
def test_every_task_once_with_a_worker_built_once_per_slot(pool):
    done = run(pool, Doubling(), [(str(n), n) for n in range(12)])
    assert {key: d.value[1] for key, d in done.items()} == {str(n): 2 * n for n in range(12)}
    assert all(d.error is None and d.attempts == 1 for d in done.values())
    pids = {d.value[0] for d in done.values()}
    if pool.name == "threads":
        assert pids == {os.getpid()}
    else:  # in processes of their own (one may have started late and done none)
        assert len(pids) in (1, 2) and os.getpid() not in pids


@pytest.mark.parametrize("pool", [ThreadPool(1), ProcessPool(1)], ids=["threads", "processes"])
def test_a_task_that_raises_is_run_twice_then_recorded_as_an_error(pool):
    done = run(pool, Doubling(raise_on=3), [(str(n), n) for n in range(5)])
    assert done["3"].value is None and done["3"].attempts == MAX_ATTEMPTS
    assert done["3"].error == "failed 2 times: ValueError: cannot double 3"
    assert [done[k].value[1] for k in ("0", "1", "2", "4")] == [0, 2, 4, 8]


def test_a_lost_process_takes_only_its_task_which_runs_again(tmp_path):
    marker = tmp_path / "died"
    done = run(ProcessPool(2), Doubling(die_on=4, marker=marker), [(str(n), n) for n in range(8)])
    assert marker.exists()
    assert done["4"].value[1] == 8 and done["4"].attempts == 2 and done["4"].error is None
    assert all(done[str(n)].attempts == 1 for n in range(8) if n != 4)
    assert len(done) == 8


@pytest.mark.parametrize("pool", [ThreadPool(1), ProcessPool(1)], ids=["threads", "processes"])
def test_a_worker_that_cannot_be_built_ends_the_run(pool):
    with pytest.raises(WorkerStartError, match="no backend for this worker"):
        run(pool, Doubling(broken=True), [("a", 1)])


@pytest.mark.parametrize("pool", [ThreadPool(2), ProcessPool(2)], ids=["threads", "processes"])
def test_items_are_read_only_as_slots_free_up(pool):
    pulled = []

    def items():
        for n in range(10):
            pulled.append(n)
            yield str(n), n

    seen_when_done = []
    pool.run(Doubling(seconds=0.2), items(), lambda d: seen_when_done.append(len(pulled)))
    assert len(seen_when_done) == 10
    # when the first result arrives, the items in flight have been read, and at most one
    # more per slot (a thread that finished takes its next item at once): not all ten
    assert seen_when_done[0] <= 2 * pool.in_flight


def test_no_item_starts_no_worker():
    ProcessPool(2).run(Doubling(broken=True), [], lambda d: None)  # would raise if built
