"""The kept development runs, replayed through the current code: 0 wrong acceptances.

Issue 38 asks that a replay of the kept runs still gives 0 wrong acceptances. The kept runs
are the `acts` and `linear` runs (the methods that accept) in ``results/bird-critic-dev``
(`acts-*`, `linear-*`; a run kept later is picked up by its folder name). Each chosen task is
replayed with `scripts/replay_run.py`'s `replay_answer`: the current engine, the recorded
method and budgets, a fresh database as the benchmark builds it, and a scripted backend that
answers each purpose with the model's recorded replies in order. A replay whose code asks
other questions than the recording "diverges" and may run out of replies (the run then ends
on an LLM error); that is fine here. A *wrong acceptance* is a replayed answer that comes
back ``accepted`` and fails the development split's tests; only accepted answers are scored
(a wrong acceptance needs one), so solutions are read by the evaluator alone, never shown.

Which tasks (one replay per task and run, the run's last record of it):

- every SQLite task: a replay takes a fraction of a second there, so all of them run, and
  they stand for the tasks on which no candidate was ever accepted or right;
- on PostgreSQL (a fresh server database per task, and slower checks), the tasks where an
  acceptance is in reach of the recorded replies: the recorded run accepted its answer,
  or its answer passed, or one of its scored candidates (``candidates.jsonl``) passed.
  Those are the replies that once convinced an engine, or that hold a right answer next to
  wrong ones; a rule that accepts too easily shows there first. The other PostgreSQL tasks
  (replies that were never accepted and never right) are left to
  ``scripts/replay_run.py --run DIR`` (all tasks of a run), or to this test with
  ``ACTS_SQL_REPLAY_ALL=1``, which replays every task of every kept run.

The test skips when the BIRD-CRITIC data is absent, and the PostgreSQL half when
``ACTS_SQL_TEST_PG_URL`` is not set or its server does not work. Besides the assertion, it
prints one line per run (tasks, acceptances, wrong ones, diverged replays, seconds): run it
with ``-s`` to see them. A second test checks the check: a replay made to accept the user's
own SQL (which fails its task) is reported, with its run and task.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from acts_sql.bench.errors import EvaluatorSetupError
from acts_sql.bench.evaluate import load_items
from acts_sql.bench.models import ScoredTask, Status
from acts_sql.bench.scorer import EvalOptions, Evaluator
from acts_sql.bench.selection import TaskFilter
from acts_sql.bench.servers import ServerURLs
from support import load_script

KEPT = Path(__file__).resolve().parents[2] / "results" / "bird-critic-dev"
ACCEPTING_METHODS = ("acts", "linear")
REPLAY_ALL = "ACTS_SQL_REPLAY_ALL"
EVERY_TASK_DIALECTS = ("SQLite",)
"""Dialects whose tasks are all replayed (cheap); the others only where acceptance is in reach."""


class Pick(NamedTuple):
    """One task of one kept run to replay."""

    run: Path
    record: dict[str, Any]

    @property
    def name(self) -> str:
        return f"{self.run.name}: {self.record['set']}/{self.record['instance_id']}"


class Outcome(NamedTuple):
    """A replayed pick: accepted or not, its verdict when accepted (None otherwise), whether
    its LLM calls diverged from the recording, the engine's stop reason, the seconds taken."""

    pick: Pick
    accepted: bool
    status: str | None
    diverged: bool
    reason: str
    seconds: float


@pytest.fixture(scope="module")
def replay():
    return load_script("replay_run")


def kept_runs() -> list[Path]:
    """The kept runs of the methods that accept (folders ``<method>-<label>``)."""
    runs = [
        d for m in ACCEPTING_METHODS for d in KEPT.glob(f"{m}-*") if (d / "records.jsonl").exists()
    ]
    return sorted(runs)


def _passing_candidates(run: Path) -> set[tuple[str, str]]:
    """Tasks of `run` with a scored candidate that passed (``candidates.jsonl``)."""
    path = run / "candidates.jsonl"
    if not path.exists():
        return set()
    rows = (json.loads(line) for line in path.read_text().splitlines() if line.strip())
    return {(r["set"], str(r["instance_id"])) for r in rows if r.get("any_pass")}


def in_reach(record: dict[str, Any], passing: set[tuple[str, str]]) -> bool:
    """Whether the recorded replies came near an acceptance: accepted, passed, or a
    candidate passed."""
    key = (record["set"], str(record["instance_id"]))
    return bool(record.get("accepted")) or record["status"] == "passed" or key in passing


def picks(replay: Any, dialect: str) -> list[Pick]:
    """The tasks of `dialect` to replay (module docstring)."""
    every = dialect in EVERY_TASK_DIALECTS or os.environ.get(REPLAY_ALL) == "1"
    chosen: list[Pick] = []
    for run in kept_runs():
        passing = _passing_candidates(run)
        for record in replay.load_records(run):
            if record.get("dialect") != dialect or not record.get("trace_file"):
                continue
            if every or in_reach(record, passing):
                chosen.append(Pick(run, record))
    return chosen


def _items(data: Path, chosen: list[Pick]) -> dict[tuple[str, str], ScoredTask]:
    ids = sorted({f"{p.record['set']}/{p.record['instance_id']}" for p in chosen})
    items = load_items(data / "tasks", data / "dev", TaskFilter(ids=ids))
    return {(i.task.set, str(i.task.instance_id)): i for i in items}


def replayed(replay: Any, chosen: list[Pick], data: Path, ev: Evaluator) -> Iterator[Outcome]:
    """Each pick replayed; its answer scored when it was accepted."""
    items = _items(data, chosen)
    for pick in chosen:
        started = time.perf_counter()
        item = items[(pick.record["set"], str(pick.record["instance_id"]))]
        answer = replay.replay_answer(pick.run, pick.record, item, ev)
        if answer is None:
            continue
        result = answer.result
        status = None
        if result.accepted:
            status = ev.score(item, replay.prediction_of(result)).status.value
        seconds = time.perf_counter() - started
        yield Outcome(pick, result.accepted, status, answer.diverged, result.reason, seconds)


def _evaluator(request: pytest.FixtureRequest, dialect: str) -> Evaluator:
    servers = ServerURLs()
    if dialect == "PostgreSQL":
        servers = ServerURLs(postgresql=request.getfixturevalue("pg_url"))
    evaluator = Evaluator(EvalOptions(servers=servers))
    try:
        evaluator.check_servers([dialect])
    except EvaluatorSetupError as exc:
        evaluator.close()
        pytest.skip(f"no usable {dialect} server for the replay: {exc}")
    return evaluator


def _summary(outcomes: list[Outcome]) -> list[str]:
    """One line per run: tasks replayed, acceptances, wrong ones, diverged replays, seconds."""
    lines = []
    for run in sorted({o.pick.run.name for o in outcomes}):
        mine = [o for o in outcomes if o.pick.run.name == run]
        accepted = sum(o.accepted for o in mine)
        wrong = sum(o.accepted and o.status != Status.PASSED.value for o in mine)
        diverged = sum(o.diverged for o in mine)
        seconds = sum(o.seconds for o in mine)
        lines.append(
            f"{run}: {len(mine)} tasks, {accepted} accepted, {wrong} wrongly, "
            f"{diverged} diverged, {seconds:.1f} s"
        )
    return lines


def wrong_acceptances(outcomes: list[Outcome]) -> list[str]:
    """Each replay that accepted an answer failing the tests, named with the engine's reason."""
    return [
        f"{o.pick.name} accepted an answer that is {o.status}"
        f"{' (diverged replay)' if o.diverged else ''}; engine: {o.reason[:300]}"
        for o in outcomes
        if o.accepted and o.status != Status.PASSED.value
    ]


@pytest.mark.timeout(600)  # every kept acts/linear task: about 60 s idle, 110 s on busy cores
@pytest.mark.parametrize("dialect", ["SQLite", "PostgreSQL"])
def test_replayed_kept_runs_accept_no_wrong_answer(replay, bird_critic_dir, request, dialect):
    chosen = picks(replay, dialect)
    if not chosen:
        pytest.skip(f"no kept acts/linear run has a {dialect} task in {KEPT}")
    evaluator = _evaluator(request, dialect)
    try:
        outcomes = list(replayed(replay, chosen, bird_critic_dir, evaluator))
    finally:
        evaluator.close()
    print("\n" + "\n".join(_summary(outcomes)))

    missing = {p.name for p in chosen} - {o.pick.name for o in outcomes}
    assert not missing, f"kept tasks without a trace to replay: {sorted(missing)}"
    wrong = wrong_acceptances(outcomes)
    assert not wrong, "wrong acceptances in the replay:\n" + "\n".join(wrong)


def test_an_accepted_answer_that_fails_is_reported_with_its_task(
    replay, bird_critic_dir, monkeypatch
):
    # a kept SQLite task replayed by an engine that accepts the user's own SQL, which fails
    # the task's tests (that is what makes it a task)
    chosen = picks(replay, "SQLite")[:1]
    if not chosen:
        pytest.skip(f"no kept acts/linear run has a SQLite task in {KEPT}")
    real = replay.replay_answer

    def accepting_the_issue_sql(run: Path, record: Any, item: ScoredTask, ev: Evaluator) -> Any:
        answer = real(run, record, item, ev)
        issue = list(item.task.issue_sql)
        update = {"accepted": True, "statements": issue, "sql": ";\n".join(issue)}
        return answer._replace(result=answer.result.model_copy(update=update))

    monkeypatch.setattr(replay, "replay_answer", accepting_the_issue_sql)
    with Evaluator(EvalOptions()) as evaluator:
        outcomes = list(replayed(replay, chosen, bird_critic_dir, evaluator))

    assert len(outcomes) == 1 and outcomes[0].status not in (None, Status.PASSED.value)
    (wrong,) = wrong_acceptances(outcomes)
    assert wrong.startswith(f"{chosen[0].name} accepted an answer that is {outcomes[0].status}")
