#!/usr/bin/env python
"""Would stopping at the first overruled rejection lose right answers, and save what? No model.

    .venv/bin/python scripts/overruled_stops.py [--results results]

Reads each kept trace with an ``overruled`` event (the `acts` and `linear` runs of
``--results/bird-critic-dev``, the `acts` runs of ``--results/everyday-local``) at its first one:
the overruled group's candidates before it (duplicates aside: the early answer) and the LLM calls
and seconds before and after it. A trace a joined run copied from one of its parts (its
``sources.json``) counts once, as the joined run's. The final's outcome is the run's records'.
The early answer passes, on bird-critic-dev, if the evaluator passed the same SQL (whitespace,
case, a trailing ``;`` aside) for the task in any kept run's ``candidates.jsonl`` (with no
verdict: the final's outcome if the final SQL is a member); on everyday-local, if every member
returns the gold rows as the bench scores (`returns_gold`), run beside the gold SQL on an
in-memory SQLite or DuckDB build of the fixture, or on PostgreSQL its recorded rows against a
right final's to the same case in any kept trace (fails if none does; otherwise unknown).
LOSS: the final passed and the early answer fails; GAIN: the other way round.

Prints the traces with an overruled event and the copies left out, then a line over both suites
and one per suite: traces and distinct tasks, finals in the overruled group, accepted finals,
finals and early answers that pass (and early answers unknown), LOSS, GAIN, the LLM calls and
seconds before and after the first overruled event, and the wall seconds after it.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import statistics
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple

from acts_sql.bench.errors import import_driver
from acts_sql.bench.everyday.cases import EverydayCase, fixture_statements, load_cases
from acts_sql.bench.everyday.scoring import gold_result, returns_gold
from acts_sql.bench.loader import read_trace
from acts_sql.db.result import ExecResult
from acts_sql.engine.events import EventKind

BIRD, EVERYDAY = "bird-critic-dev", "everyday-local"
METHODS = {BIRD: ("acts", "linear"), EVERYDAY: ("acts",)}


class Member(NamedTuple):
    sql: str
    result: dict[str, Any] | None  # as the trace recorded it


@dataclass(frozen=True)
class Stop:
    """A trace with an overruled event, read at its first one."""

    suite: str
    run: str
    set: str
    task: str
    members: tuple[Member, ...]
    final_same_group: bool
    final_is_member: bool
    accepted: bool
    final_passed: bool | None
    calls: tuple[int, int]  # LLM calls before, after the event
    seconds: tuple[float, float]  # their seconds
    wall_after: float
    early_pass: bool | None = None


def norm(sql: str | None) -> str:
    return re.sub(r"\s+", " ", (sql or "").strip().rstrip(";").strip()).lower()


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def outcomes(run: Path, suite: str) -> dict[tuple[str, str], bool]:
    """(set, task) -> whether the final answer passed, from the run's records."""
    if suite == EVERYDAY:
        return {("acts", r["id"]): bool(r["right"]) for r in jsonl(run / "records-acts.jsonl")}
    return {
        (r["set"], r["instance_id"]): r["status"] == "passed"
        for r in jsonl(run / "records.jsonl")
        if r["method"] in METHODS[BIRD]
    }


def trace_dirs(results: Path) -> Iterator[tuple[str, Path, Path]]:
    """(suite, run, folder of traces) of every run the measurement reads."""
    for suite, methods in METHODS.items():
        for run in sorted(p for p in (results / suite).iterdir() if p.name.startswith(methods)):
            traces = run / "traces"
            folders = [traces / "acts"] if suite == EVERYDAY else sorted(traces.iterdir())
            yield from ((suite, run, f) for f in folders if f.is_dir())


def read_stop(trace: dict[str, Any], where: dict[str, Any]) -> Stop | None:
    """The trace read at its first overruled event; None when it has none."""
    events = trace["trace"]
    first = next((i for i, e in enumerate(events) if e["kind"] == EventKind.OVERRULED), None)
    if first is None:
        return None
    group = events[first]["data"]["group"]
    results = {c["id"]: c.get("result") for c in trace.get("candidates", [])}
    members = tuple(  # the group's candidates before the event, duplicates aside
        Member(e["data"]["sql"], results.get(e["data"].get("candidate")))
        for e in events[:first]
        if e["kind"] == EventKind.CANDIDATE
        and e["data"].get("group") == group
        and not e["data"].get("duplicate")
    )
    final = norm(trace["sql"])
    final_groups = {c.get("group") for c in trace.get("candidates", []) if norm(c["sql"]) == final}
    calls = [(i, e) for i, e in enumerate(events) if e["kind"] == EventKind.LLM_CALL]
    before = [float(e["data"].get("seconds") or 0) for i, e in calls if i < first]
    after = [float(e["data"].get("seconds") or 0) for i, e in calls if i > first]
    return Stop(
        **where,
        members=members,
        final_same_group=group in final_groups,
        final_is_member=any(norm(m.sql) == final for m in members),
        accepted=bool(trace.get("accepted")),
        calls=(len(before), len(after)),
        seconds=(sum(before), sum(after)),
        wall_after=events[-1]["t"] - events[first]["t"],
    )


def scan(results: Path) -> tuple[list[Stop], dict[str, ExecResult]]:
    """Every trace with an overruled event, and a right final's result per everyday case."""
    stops: list[Stop] = []
    right_finals: dict[str, ExecResult] = {}
    for suite, run, folder in trace_dirs(results):
        passed = outcomes(run, suite)
        for path in sorted(folder.glob("*.json.gz")):
            task = path.name.removesuffix(".json.gz")
            trace = read_trace(path)
            outcome = passed.get((folder.name, task))
            final = trace.get("result")
            if suite == EVERYDAY and outcome and final and task not in right_finals:
                right_finals[task] = ExecResult.model_validate(final)
            where = {"suite": suite, "run": run.name, "set": folder.name, "task": task}
            stop = read_stop(trace, where | {"final_passed": outcome})
            if stop is not None:
                stops.append(stop)
    return stops, right_finals


def merged_copies(results: Path) -> set[tuple[str, str, str]]:
    """(suite, run, set/task) of every part's trace that a joined run holds a copy of."""
    copies: set[tuple[str, str, str]] = set()
    for path in sorted(results.glob("*/*/sources.json")):
        suite = path.parent.parent.name
        for source in json.loads(path.read_text("utf-8"))["sources"]:
            copies |= {(suite, source["run"], task) for task in source["tasks"]}
    return copies


def bird_verdicts(results: Path) -> dict[tuple[str, str, str], set[str]]:
    """(set, task, normalised SQL) -> the evaluator's verdicts on it in any kept run."""
    verdicts: dict[tuple[str, str, str], set[str]] = {}
    for path in sorted((results / BIRD).glob("*/candidates.jsonl")):
        for row in jsonl(path):
            for v in row["verdicts"]:
                if v["verdict"] in ("passed", "failed", "error"):
                    key = (row["set"], row["instance_id"], norm(v["sql"]))
                    verdicts.setdefault(key, set()).add(v["verdict"])
    return verdicts


def bird_early(stop: Stop, verdicts: dict[tuple[str, str, str], set[str]]) -> bool | None:
    seen: set[str] = set()
    for member in stop.members:
        seen |= verdicts.get((stop.set, stop.task, norm(member.sql)), set())
    if seen:
        return "passed" in seen
    return stop.final_passed if stop.final_is_member else None


def run_sql(connection: Any, sql: str) -> ExecResult:
    cursor = connection.execute(sql)
    columns = [d[0] for d in cursor.description]
    return ExecResult(status="ok", columns=columns, rows=[list(r) for r in cursor.fetchall()])


def fixture(case: EverydayCase) -> Any:
    """An in-memory SQLite or DuckDB database built from the case's fixture."""
    driver: Any = sqlite3
    if case.dialect == "duckdb":
        driver = import_driver("duckdb", "the everyday DuckDB cases", "duckdb")
    connection = driver.connect(":memory:")
    for statement in fixture_statements(case.schema_name, case.dialect):
        connection.execute(statement)
    return connection


def member_right(case: EverydayCase, member: Member, right_final: ExecResult | None) -> bool | None:
    """Whether a candidate returns the case's gold rows; None when that cannot be told."""
    if case.dialect == "postgresql":
        result = ExecResult.model_validate(member.result) if member.result else None
        if right_final is None or result is None or not result.ok or result.truncated:
            return None
        return returns_gold(result, gold_result(right_final, case.ordered))
    with closing(fixture(case)) as connection:
        try:
            gold = gold_result(run_sql(connection, case.gold_sql), case.ordered)
            return returns_gold(run_sql(connection, member.sql), gold)
        except Exception:  # a candidate that does not run here: unknown
            return None


def everyday_early(stop: Stop, case: EverydayCase, right_final: ExecResult | None) -> bool | None:
    verdicts = {member_right(case, m, right_final) for m in stop.members}
    return verdicts.pop() if len(verdicts) == 1 else None


def summary(label: str, stops: list[Stop]) -> str:
    if not stops:
        return f"{label}: no traces"
    tasks = len({(s.suite, s.set, s.task) for s in stops})
    before, after = sum(s.calls[0] for s in stops), [s.calls[1] for s in stops]
    seconds, wall = [s.seconds[1] for s in stops], sum(s.wall_after for s in stops)
    share = sum(after) / (sum(after) + before)
    loss = sum(bool(s.final_passed) and s.early_pass is False for s in stops)
    gain = sum(bool(s.early_pass) and s.final_passed is False for s in stops)
    return (
        f"{label}: traces {len(stops)} (distinct tasks {tasks}); "
        f"final = overruled group {sum(s.final_same_group for s in stops)}; "
        f"accepted finals {sum(s.accepted for s in stops)}; "
        f"final passed {sum(bool(s.final_passed) for s in stops)}; "
        f"early answer passes {sum(bool(s.early_pass) for s in stops)}; "
        f"unknown early {sum(s.early_pass is None for s in stops)}; LOSS {loss}; GAIN {gain}; "
        f"traces with calls after >0: {sum(c > 0 for c in after)}; calls before total {before} / "
        f"after total {sum(after)} (mean {statistics.mean(after):.2f}, of all calls {share:.0%}); "
        f"LLM s before {sum(s.seconds[0] for s in stops):.0f} / after {sum(seconds):.0f} "
        f"(mean {statistics.mean(seconds):.1f}); wall s after {wall:.0f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("results"))
    results = parser.parse_args().results
    stops, right_finals = scan(results)
    verdicts = bird_verdicts(results)
    cases = {c.id: c for c in load_cases()}
    stops = [
        replace(s, early_pass=bird_early(s, verdicts))
        if s.suite == BIRD
        else replace(s, early_pass=everyday_early(s, cases[s.task], right_finals.get(s.task)))
        for s in stops
    ]
    copies = merged_copies(results)
    kept = [s for s in stops if (s.suite, s.run, f"{s.set}/{s.task}") not in copies]
    print(f"traces with an overruled event {len(stops)}; copies left out {len(stops) - len(kept)}")
    print(summary("DEDUPLICATED", kept))
    for suite in METHODS:
        print(summary(f"  {suite}", [s for s in kept if s.suite == suite]))


if __name__ == "__main__":
    main()
