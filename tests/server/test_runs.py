"""The run registry and the auth helpers, without HTTP."""

from __future__ import annotations

import asyncio
import threading

import pytest

from acts_sql.engine.events import TraceEvent
from acts_sql.engine.options import CorrectionOptions
from acts_sql.engine.result import CorrectionResult
from acts_sql.server.auth import Access, TokenSet
from acts_sql.server.errors import ApiError, ErrorCode
from acts_sql.server.models import RunState
from acts_sql.server.runs import Run, RunRegistry, RunSpec
from support import statement_event

SPEC = RunSpec(
    kind="correct",
    database="demo",
    question="q",
    sql="SELECT 1",
    dialect=None,
    options=CorrectionOptions.of(max_llm_calls=1, max_nodes=1, max_depth=1, max_seconds=5.0),
)


def event(seq: int) -> TraceEvent:
    return statement_event(seq)


def result_with(events: list[TraceEvent]) -> CorrectionResult:
    return CorrectionResult(
        sql="SELECT 1",
        accepted=True,
        original_sql="SELECT 1",
        method="acts",
        dialect="sqlite",
        question="q",
        trace=events,
    )


def test_readers_only_see_the_gap_free_prefix_of_events():
    run = Run(SPEC, hard_deadline_s=10)
    for seq in (0, 2, 3):
        run.add_event(event(seq))
    ready, over = run.events_from(0)
    assert [e.seq for e in ready] == [0] and over is False
    run.add_event(event(1))
    assert [e.seq for e in run.events_from(0)[0]] == [0, 1, 2, 3]
    assert [e.seq for e in run.events_from(2)[0]] == [2, 3]
    run.finish(result_with([event(i) for i in range(5)]))
    ready, over = run.events_from(4)
    assert [e.seq for e in ready] == [4] and over is True
    assert run.state is RunState.FINISHED
    # nothing changes a finished run
    assert run.fail(ApiError(ErrorCode.RUN_TIMEOUT, "late").body()) is False
    assert run.state is RunState.FINISHED


def test_waiters_wake_on_events_from_another_thread():
    run = Run(SPEC, hard_deadline_s=10)

    async def scenario() -> tuple[bool, bool]:
        version = run.version
        timer = threading.Timer(0.05, run.add_event, args=(event(0),))
        timer.start()
        woke = await run.wait_changed(version, 5)
        idle = await run.wait_changed(run.version, 0.05)
        return woke, idle

    assert asyncio.run(scenario()) == (True, False)


def test_the_registry_refuses_runs_beyond_its_slots_and_frees_them():
    gate = threading.Event()

    def work(spec, listener, asker):
        listener(event(0))
        gate.wait(5)
        return result_with([event(0)])

    registry = RunRegistry(work, max_active=2, keep_finished=1, grace_seconds=0)
    try:
        first, second = registry.submit(SPEC), registry.submit(SPEC)
        with pytest.raises(ApiError) as refused:
            registry.submit(SPEC)
        assert refused.value.code is ErrorCode.TOO_MANY_RUNS and refused.value.status == 429
        gate.set()
        asyncio.run(first.wait_done())
        asyncio.run(second.wait_done())
        assert registry.active == 0
        third = registry.submit(SPEC)
        asyncio.run(third.wait_done())
        # only keep_finished finished runs are kept
        assert [r.id for r in registry.recent(10)] == [third.id]
    finally:
        registry.close()


def test_a_failing_work_function_fails_the_run_not_the_service():
    def work(spec, listener, asker):
        raise RuntimeError("boom")

    registry = RunRegistry(work, max_active=1, keep_finished=5, grace_seconds=0)
    try:
        run = registry.submit(SPEC)
        asyncio.run(run.wait_done())
        assert run.state is RunState.FAILED
        assert run.error is not None and run.error.code is ErrorCode.INTERNAL_ERROR
        assert "boom" not in run.error.message  # no internals leak
        assert registry.active == 0
    finally:
        registry.close()


def test_tokens_are_checked_exactly():
    tokens = TokenSet(["token-aaaaaaaaaaaaaaaa", "token-bbbbbbbbbbbbbbbb"])
    assert tokens.authenticate(None) is Access.NONE
    assert tokens.authenticate("Bearer token-bbbbbbbbbbbbbbbb") is Access.TOKEN
    assert tokens.authenticate("bearer   token-aaaaaaaaaaaaaaaa ") is Access.TOKEN
    for bad in (
        "Bearer token-aaaaaaaaaaaaaaa",
        "Bearer token-aaaaaaaaaaaaaaaaa",
        "token-a",
        "Bearer ü",
    ):
        with pytest.raises(ApiError) as refused:
            tokens.authenticate(bad)
        assert refused.value.code is ErrorCode.INVALID_TOKEN
