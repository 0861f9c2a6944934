"""Deadlines hold: every LLM call and statement gets what is left of the run's time.

A run never exceeds ``max_seconds`` by more than a moment: each LLM call is
sent with ``timeout_s`` = the time left, a backend that runs out of it ends
the run with ``budget exhausted: wall time`` and the best candidate so far,
and each statement's timeout is capped at the time left.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from acts_sql import CorrectionOptions, correct
from acts_sql.db.result import ExecResult
from acts_sql.db.sqlite import SQLiteExecutor
from acts_sql.engine.budget import Budget, BudgetExhaustedError, BudgetTracker
from acts_sql.engine.recording import (
    MIN_STATEMENT_SECONDS,
    TracedExecutor,
    TracedLLM,
    UsageLedger,
    capped_timeout,
)
from acts_sql.engine.trace import Trace
from acts_sql.errors import LLMDeadlineError, LLMError
from acts_sql.llm.base import LLMRequest, LLMResponse, Message, Usage

ORIGINAL = "SELECT nam FROM users ORDER BY id"  # fails: no such column
FIXED = "SELECT name FROM users ORDER BY id"
PLAN = {
    "cursor": "n1",
    "nodes": [
        {
            "id": "n1",
            "description": "write the corrected SQL",
            "tool": "generate_sql",
            "input": {},
            "children": [],
        }
    ],
}
REPLIES = {
    "plan": json.dumps(PLAN),
    "generate_sql": json.dumps({"sql": FIXED, "rationale": "the column is called name"}),
    "correct": f"```sql\n{FIXED}\n```",
    "judge": json.dumps(
        {"verdict": "accept", "reason": "lists the names", "group": "A", "backtrack_to": None}
    ),
}


class SlowBackend:
    """Answers by purpose after `delays[purpose]` seconds (else `delay_s`).

    Like a real backend it honours the call's ``timeout_s``: a reply that
    would take longer stops at the deadline with LLMDeadlineError.
    """

    name = "fake:slow"

    def __init__(self, *, delay_s: float = 0.0, **delays: float) -> None:
        self.delay_s = delay_s
        self.delays = delays
        self.requests: list[LLMRequest] = []

    def complete(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        delay = self.delays.get(request.purpose, self.delay_s)
        if request.timeout_s is not None and delay > request.timeout_s:
            time.sleep(max(0.0, request.timeout_s))
            raise LLMDeadlineError(
                f"wall time: the {request.purpose} call passed its deadline",
                purpose=request.purpose,
                seconds=request.timeout_s,
            )
        time.sleep(delay)
        text = REPLIES.get(request.purpose, "{}")
        return LLMResponse(text=text, usage=Usage(purpose=request.purpose, seconds=delay))


@pytest.fixture
def users_db(tmp_path: Path) -> Path:
    path = tmp_path / "users.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
        conn.executemany("INSERT INTO users VALUES (?, ?)", [(1, "Ada"), (2, "Linus")])
    return path


def run(db: Path, llm: SlowBackend, max_seconds: float) -> tuple[Any, float]:
    executor = SQLiteExecutor(db)
    started = time.perf_counter()
    try:
        result = correct(
            executor,
            "list the user names",
            ORIGINAL,
            llm=llm,
            # the judge's deadline is under test: no evidence gate accepting before it
            options=CorrectionOptions(
                candidates=1, budget=Budget(max_seconds=max_seconds), evidence_gate=False
            ),
        )
    finally:
        executor.close()
    return result, time.perf_counter() - started


# -- a run within its wall time ---------------------------------------------------------


def test_a_slow_judge_ends_the_run_at_its_deadline_with_the_best_candidate(
    users_db: Path,
) -> None:
    llm = SlowBackend(judge=5.0)  # everything else answers at once
    result, seconds = run(users_db, llm, max_seconds=2)

    assert seconds < 2.5
    assert result.reason.startswith("budget exhausted: wall time (2 s)")
    assert result.accepted is False
    assert result.sql == FIXED  # the best candidate so far, not the failing original
    judge = [r for r in llm.requests if r.purpose == "judge"]
    # the time left, less the second kept for returning the answer
    assert judge and judge[0].timeout_s is not None and 0.0 < judge[0].timeout_s <= 1.0
    failed = [e for e in result.trace if e.kind == "llm_call" and not e.data["ok"]]
    assert failed and failed[-1].purpose == "judge" and failed[-1].data["timeout_s"] <= 2.0
    assert any(e.kind == "budget_exhausted" for e in result.trace)


def test_a_backend_slower_than_the_whole_run_returns_the_rule_repair_in_time(
    users_db: Path,
) -> None:
    """The rule chain runs before any model call: a backend that never answers in time still
    leaves the deterministic repair of the user's error (not accepted: nothing agreed)."""
    result, seconds = run(users_db, SlowBackend(delay_s=5.0), max_seconds=1)

    assert seconds < 1.5
    assert result.reason.startswith("budget exhausted: wall time (1 s)")
    assert result.accepted is False and result.sql == FIXED != ORIGINAL
    assert [c["origin"] for c in result.candidates] == ["rule:unknown_identifier"]
    assert not [e for e in result.trace if e.kind == "llm_call" and e.data["ok"]]


def test_the_time_a_call_may_take_shrinks_as_the_run_goes_on(users_db: Path) -> None:
    llm = SlowBackend(delay_s=0.2)
    result, seconds = run(users_db, llm, max_seconds=3)

    assert seconds < 3.5
    sent = [r.timeout_s for r in llm.requests]
    assert len(sent) >= 3 and all(t is not None for t in sent)
    assert sent[0] <= 3.0
    for earlier, later in itertools.pairwise(sent):
        assert later <= earlier - 0.19  # each call took 0.2 s of the run
    recorded = [e.data["timeout_s"] for e in result.trace if e.kind == "llm_call"]
    assert recorded == [round(t, 3) for t in sent]


# -- TracedLLM -------------------------------------------------------------------------------


class Answer:
    """Returns at once, saying why it stopped; or raises what it is given."""

    name = "fake:answer"

    def __init__(self, stopped_by: str | None = None, error: Exception | None = None) -> None:
        self.stopped_by = stopped_by
        self.error = error
        self.requests: list[LLMRequest] = []

    def complete(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        if self.error is not None:
            raise self.error
        usage = Usage(purpose=request.purpose, completion_tokens=3, stopped_by=self.stopped_by)
        return LLMResponse(text='{"sql": "SELE', usage=usage)


def ask(purpose: str = "plan", timeout_s: float | None = None) -> LLMRequest:
    return LLMRequest(
        purpose=purpose, messages=[Message(role="user", content="fix it")], timeout_s=timeout_s
    )


def traced(inner: Any, max_seconds: float) -> tuple[TracedLLM, Trace, BudgetTracker]:
    trace = Trace()
    budget = BudgetTracker(Budget(max_seconds=max_seconds))
    return TracedLLM(inner, trace, budget, UsageLedger()), trace, budget


def test_each_call_gets_the_time_left_or_its_own_smaller_limit() -> None:
    inner = Answer(stopped_by="deadline")
    llm, trace, _ = traced(inner, max_seconds=30)
    llm.complete(ask())
    llm.complete(ask(timeout_s=2.5))
    llm.complete(ask(timeout_s=100.0))
    first, own, capped = (r.timeout_s for r in inner.requests)
    assert first is not None and 28.0 < first <= 29.0  # a second is kept for the end
    assert own == 2.5
    assert capped is not None and capped <= first
    event = next(e for e in trace.events if e.kind == "llm_call")
    assert event.data["timeout_s"] == round(first, 3)
    assert event.data["stopped_by"] == "deadline"
    assert "partial reply" in event.summary


def test_a_call_with_no_time_left_is_not_made() -> None:
    inner = Answer()
    llm, _, _ = traced(inner, max_seconds=0.05)
    time.sleep(0.06)
    with pytest.raises(BudgetExhaustedError, match="wall time"):
        llm.complete(ask())
    assert inner.requests == []


def test_a_deadline_error_ends_the_run_as_wall_time_when_the_run_set_the_deadline() -> None:
    error = LLMDeadlineError("wall time: stopped", purpose="plan", seconds=1.0)
    llm, trace, _ = traced(Answer(error=error), max_seconds=20)
    with pytest.raises(BudgetExhaustedError, match=r"wall time \(20 s\)") as caught:
        llm.complete(ask())
    assert caught.value.__cause__ is error
    event = next(e for e in trace.events if e.kind == "llm_call")
    assert event.data["ok"] is False and event.data["timeout_s"] <= 20.0
    # the request's own, smaller limit ran out: an LLM failure, not the run's time
    llm, _, _ = traced(Answer(error=error), max_seconds=20)
    with pytest.raises(LLMDeadlineError):
        llm.complete(ask(timeout_s=1.0))
    llm, _, _ = traced(Answer(error=LLMError("endpoint down")), max_seconds=20)
    with pytest.raises(LLMError, match="endpoint down"):
        llm.complete(ask())


# -- statements -----------------------------------------------------------------------------


class RecordingExecutor:
    """Records the timeout each statement is given."""

    dialect = "sqlite"

    def __init__(self, default_timeout: float | None = None) -> None:
        self.default_timeout = default_timeout
        self.timeouts: list[float | None] = []
        self.isolated: list[bool] = []
        self.scratch_statements: list[str] = []

    def execute(
        self,
        sql: str,
        *,
        max_rows: int | None = None,
        timeout: float | None = None,
        isolate: bool = False,
    ) -> ExecResult:
        self.timeouts.append(timeout)
        self.isolated.append(isolate)
        return ExecResult(status="ok")

    @contextmanager
    def scratch(self) -> Any:
        executor = self

        class Session:
            def create_stand_in(self, name: str, columns: list[str]) -> ExecResult:
                return ExecResult(status="ok")

            def execute(self, sql: str, *, max_rows: int | None = None) -> ExecResult:
                executor.scratch_statements.append(sql)
                return ExecResult(status="ok")

        yield Session()

    def reflect(self, sample_rows: int = 3) -> list[Any]:
        return []

    def close(self) -> None:
        pass


def test_the_timeout_rule() -> None:
    select, recursive = "SELECT 1", "WITH RECURSIVE c(x) AS (SELECT 1) SELECT x FROM c"
    assert capped_timeout(select, None, 100.0) is None  # 60 s default ends in time
    assert capped_timeout(select, None, 10.0) == 10.0
    assert capped_timeout(recursive, None, 20.0) is None  # 15 s default ends in time
    assert capped_timeout(recursive, None, 10.0) == 10.0
    assert capped_timeout(select, 3.0, 10.0) == 3.0
    assert capped_timeout(select, 30.0, 10.0) == 10.0
    assert capped_timeout(select, None, 10.0, default=5.0) is None
    assert capped_timeout(select, None, 10.0, default=30.0) == 10.0
    # a script: never longer than any statement's own limit
    assert capped_timeout(f"{select}; {recursive}", None, 40.0) == 15.0


def test_a_statement_timeout_is_capped_at_the_time_left() -> None:
    inner = RecordingExecutor()
    trace = Trace()
    plenty = TracedExecutor(inner, trace, "n1", "run_sql", budget=BudgetTracker(Budget()))
    plenty.execute("SELECT 1")
    plenty.execute("SELECT 1", timeout=3.0)
    short = TracedExecutor(
        inner, trace, "n1", "run_sql", budget=BudgetTracker(Budget(max_seconds=8))
    )
    short.execute("SELECT 1")
    short.execute("SELECT 1", timeout=3.0)
    unbounded = TracedExecutor(inner, trace, "n1", "run_sql", budget=None)  # no cap
    unbounded.execute("SELECT 1")
    default, explicit, capped, kept, none = inner.timeouts
    assert default is None and explicit == 3.0  # 600 s left: the executor's own rules
    assert capped is not None and 7.5 < capped <= 8.0
    assert kept == 3.0 and none is None


def test_the_executor_default_is_kept_when_it_ends_in_time() -> None:
    inner = RecordingExecutor(default_timeout=5.0)
    budget = BudgetTracker(Budget(max_seconds=8))
    TracedExecutor(inner, Trace(), None, "original", budget=budget).execute("SELECT 1")
    inner.default_timeout = 30.0
    TracedExecutor(inner, Trace(), None, "original", budget=budget).execute("SELECT 1")
    kept, capped = inner.timeouts
    assert kept is None
    assert capped is not None and capped <= 8.0


def test_the_traced_executor_isolates_every_statement() -> None:
    inner = RecordingExecutor()
    executor = TracedExecutor(inner, Trace(), "n1", "candidate", budget=BudgetTracker(Budget()))
    executor.execute("SELECT 1")
    executor.execute("DELETE FROM t")
    assert inner.isolated == [True, True]


def test_an_executor_without_the_isolate_keyword_is_called_without_it() -> None:
    class Older:
        dialect = "sqlite"
        calls = 0

        def execute(self, sql: str, *, max_rows: int | None = None, timeout: float | None = None):
            Older.calls += 1
            return ExecResult(status="ok")

    executor = TracedExecutor(Older(), Trace(), "n1", "run_sql", budget=None)  # type: ignore[arg-type]
    assert executor.execute("SELECT 1").ok and Older.calls == 1


def test_executors_share_the_budget_of_the_runs_llm() -> None:
    inner = RecordingExecutor()
    llm, trace, _ = traced(Answer(), max_seconds=8)
    TracedExecutor(inner, trace, "n1", "candidate", budget=llm.budget).execute("SELECT 1")
    assert inner.timeouts[0] is not None and inner.timeouts[0] <= 8.0
    assert llm.name == "fake:answer"


def test_no_statement_starts_with_almost_no_time_left() -> None:
    inner = RecordingExecutor()
    budget = BudgetTracker(Budget(max_seconds=MIN_STATEMENT_SECONDS / 2))
    executor = TracedExecutor(inner, Trace(), "n1", "run_sql", budget=budget)
    with pytest.raises(BudgetExhaustedError, match="wall time"):
        executor.execute("SELECT 1")
    with executor.scratch() as session, pytest.raises(BudgetExhaustedError):
        session.execute("SELECT 1")
    assert inner.timeouts == [] and inner.scratch_statements == []


def test_a_long_statement_ends_when_the_run_does(users_db: Path) -> None:
    forever = (
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000) "
        "SELECT count(*) FROM c"
    )
    executor = SQLiteExecutor(users_db)
    try:
        budget = BudgetTracker(Budget(max_seconds=0.5))
        started = time.perf_counter()
        result = TracedExecutor(executor, Trace(), "n1", "run_sql", budget=budget).execute(forever)
        seconds = time.perf_counter() - started
    finally:
        executor.close()
    assert result.status == "timeout"
    assert seconds < 1.0  # not the 15 s of a WITH RECURSIVE statement


class Sampled(Answer):
    """Says which decoder wrote the reply, as the local backend does."""

    def complete(self, request: LLMRequest) -> LLMResponse:
        response = super().complete(request)
        decoder = "sampler" if request.temperature > 0 else "lookup"
        return response.model_copy(
            update={"usage": response.usage.model_copy(update={"decoder": decoder})}
        )


def test_the_trace_says_which_calls_were_samples_and_what_wrote_them() -> None:
    llm, trace, _ = traced(Sampled(), max_seconds=30)
    llm.complete(ask("generate_sql"))
    llm.complete(ask("generate_sql").model_copy(update={"temperature": 0.8, "seed": 1}))
    llm, plain, _ = traced(Answer(), max_seconds=30)
    llm.complete(ask())
    greedy, sample = (e.data for e in trace.events if e.kind == "llm_call")
    assert greedy["decoder"] == "lookup" and "temperature" not in greedy
    assert sample["decoder"] == "sampler" and sample["temperature"] == 0.8
    unsaid = next(e for e in plain.events if e.kind == "llm_call").data
    assert "decoder" not in unsaid  # the backend did not say
