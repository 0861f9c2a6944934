#!/usr/bin/env python
"""Could the rule chain repair the model's failing candidates? An offline measurement, no model.

    source /tmp/svc/env   # or pass --pg-url
    .venv/bin/python scripts/candidate_rule_repairs.py \\
        --run acts-1.5b-scaled29 --run raw-1.5b [--run ...] \\
        [--results results/bird-critic-dev] [--data /work/shared/data/bird-critic] \\
        [--out artifacts/candidate-rule-repairs] [--timeout 20] [--limit-tasks N]

For each kept `bench bird-critic` run (``--results/<run>``: ``records.jsonl`` and
``traces/``), the candidates of every task (trace events of kind ``candidate``,
read with `acts_sql.bench.candidates.trace_candidates`) are deduplicated on
`normalize_sql` in the task's dialect. The failing ones (trace status other
than ok), less those that are the task's own issue SQL (the engine already runs
the chain on that), are re-executed on the task's database and, when the
failure is one a repair may fix (`acts_sql.tools.pool.repairable`), given to
``RuleChain(executor, facts, dialect, reference_sql=<issue SQL>).run(sql,
failing_result)``: every stage, as the engine's ``_rule_entries`` runs it, with
the user's SQL as reference as the engine's candidate paths (`tools.pool`,
`tools.split_fix_syntax`) pass it.

The database is the one the bench gives the agent: a fresh database with the
task's ``preprocess_sql`` (`bench.prepare.prepare_database`, own per-task
names, dropped afterwards) opened with `open_agent_executor` (a throw-away
copy) and every statement run with ``isolate=True``, as the engine's
`TracedExecutor` does; statement timeouts are capped at ``--timeout`` seconds.
Facts are `schema_facts(executor.reflect(3))`, as `engine.runner._task` builds
them. One database per task serves every run that has the task.

A repair that runs and changed the SQL is scored with the bench's evaluator
(`Evaluator.score`, on its own fresh database, statements split as the runner
splits them). Its result is compared with the results of the run's candidates
that ran (same `result_shape` fingerprint: the engine's result group) and with
the issue SQL's (same rows: the engine would refuse it). For a task where a
repair passes, whether any candidate of the run passed is read from the run's
``candidates.jsonl`` when it is up to date, else scored with `CandidateScorer`.

Prints one progress line per task on stderr, then per run and in total:
failing distinct candidates, repaired into a runnable changed statement
(count, %), repaired and passing, tasks with a new passing candidate, agreement
with a candidate that ran, repairs equal to the issue SQL's rows, repairs that
are already a candidate of the run, and which rules made the repairs. Writes
one JSON line per (run, failing candidate) to ``--out/rows.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections import Counter, defaultdict
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acts_sql.bench.candidates import (
    CandidateScorer,
    canonical,
    load_candidate_lines,
    project_dialect,
    read_records,
    statements_of,
    trace_candidates,
)
from acts_sql.bench.evaluate import load_items
from acts_sql.bench.loader import read_trace, stored_trace
from acts_sql.bench.models import ScoredTask, Status, TaskKey
from acts_sql.bench.prepare import open_agent_executor, prepare_database
from acts_sql.bench.runner import BenchRecord
from acts_sql.bench.scorer import EvalOptions, Evaluator
from acts_sql.bench.selection import TaskFilter
from acts_sql.bench.servers import ServerURLs
from acts_sql.db.executor import Executor, ScratchSession, TableInfo
from acts_sql.db.result import ExecResult
from acts_sql.engine.fingerprint import ResultShape, result_shape, same_rows
from acts_sql.tools.pool import repairable
from acts_sql.tools.rule_chain import RuleChain, schema_facts

DEFAULT_RUNS = ["acts-1.5b-scaled29", "acts-1.5b-rest11", "raw-1.5b-gap", "raw-1.5b"]


# ----------------------------------------------------------------------------- inputs


@dataclass
class Candidate:
    """One distinct candidate of one run's task."""

    key: str
    sql: str
    status: str
    origin: str
    occurrences: int = 1


@dataclass
class RunTask:
    """One run's view of one task: its record and its distinct candidates."""

    run: str
    directory: Path
    record: BenchRecord
    candidates: dict[str, Candidate] = field(default_factory=dict)


def trace_origins(path: Path) -> dict[int, str]:
    """seq -> origin of the candidate events of a trace."""
    events = read_trace(path).get("trace") or []
    origins: dict[int, str] = {}
    for index, event in enumerate(events):
        if isinstance(event, dict) and event.get("kind") == "candidate":
            raw = event.get("data")
            data: dict[str, Any] = raw if isinstance(raw, dict) else {}
            seq = event.get("seq", index) if isinstance(event.get("seq"), int) else index
            origins[seq] = str(data.get("origin") or "")
    return origins


def run_task(run: str, directory: Path, record: BenchRecord) -> RunTask | None:
    """The distinct candidates of one record's trace; None without a trace."""
    if not record.trace_file:
        return None
    path = directory / record.trace_file
    if stored_trace(path) is None:
        return None
    dialect = project_dialect(record.dialect)
    origins = trace_origins(path)
    found = RunTask(run=run, directory=directory, record=record)
    for event in trace_candidates(path):
        key = canonical(event.sql, dialect)
        if key in found.candidates:
            found.candidates[key].occurrences += 1
            continue
        found.candidates[key] = Candidate(
            key, event.sql, event.status, origins.get(event.seq, event.node or "")
        )
    return found


def load_runs(results: Path, runs: list[str]) -> dict[TaskKey, list[RunTask]]:
    """Task key -> the runs' views of it, in the order the runs were given."""
    by_task: dict[TaskKey, list[RunTask]] = defaultdict(list)
    for run in runs:
        directory = results / run if not Path(run).is_dir() else Path(run)
        for record in read_records(directory):
            if record.status == Status.NOT_EVALUABLE:
                continue
            found = run_task(directory.name, directory, record)
            if found is not None:
                by_task[record.key].append(found)
    return by_task


# ----------------------------------------------------------------------------- the database


class IsolatedExecutor:
    """An executor that runs every statement isolated (as the engine's `TracedExecutor`)
    with its timeout capped."""

    def __init__(self, inner: Executor, cap_s: float) -> None:
        self.inner = inner
        self.dialect = inner.dialect
        self.cap_s = cap_s

    def execute(
        self,
        sql: str,
        *,
        max_rows: int | None = None,
        timeout: float | None = None,
        isolate: bool = True,
    ) -> ExecResult:
        limit = self.cap_s if timeout is None else min(timeout, self.cap_s)
        return self.inner.execute(sql, max_rows=max_rows, timeout=limit, isolate=True)

    def reflect(self, sample_rows: int = 3) -> list[TableInfo]:
        return self.inner.reflect(sample_rows)

    def scratch(self) -> AbstractContextManager[ScratchSession]:
        return self.inner.scratch()

    def close(self) -> None:
        """The wrapped executor belongs to the caller."""


@dataclass
class Repair:
    """What the rule chain made of one failing candidate."""

    error: str
    rerun_status: str
    attempted: bool = False
    ok: bool = False
    changed: bool = False
    sql: str = ""
    rules: list[str] = field(default_factory=list)
    fired: list[str] = field(default_factory=list)
    shape: ResultShape | None = None
    seconds: float = 0.0
    crash: str = ""

    @property
    def useful(self) -> bool:
        return self.ok and self.changed


def one_line(text: str | None, limit: int = 160) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def repair_candidate(
    executor: IsolatedExecutor, chain: RuleChain, sql: str, dialect: str
) -> Repair:
    """Re-run the candidate; give a repairable failure to the whole chain."""
    started = time.perf_counter()
    failing = executor.execute(sql)
    repair = Repair(error=one_line(failing.failure() or "runs now"), rerun_status=failing.status)
    if failing.ok or not repairable(failing):
        return repair
    repair.attempted = True
    try:
        state = chain.run(sql, failing)
    except Exception as exc:  # a rule crash is a finding, not the end of the measurement
        repair.crash = f"{type(exc).__name__}: {one_line(str(exc))}"
        return repair
    repair.ok = state.result.ok
    repair.changed = canonical(state.sql, dialect) != canonical(sql, dialect)
    repair.sql = state.sql
    repair.rules = state.repaired_by
    repair.fired = [f"{f.rule}:{f.status}" for f in state.fired]
    repair.shape = result_shape(state.sql, state.result, dialect) if state.result.ok else None
    repair.seconds = round(time.perf_counter() - started, 2)
    return repair


@dataclass
class TaskFindings:
    """Everything measured on one task's database."""

    repairs: dict[str, Repair] = field(default_factory=dict)
    """Failing candidate key -> its repair."""
    shapes: dict[str, ResultShape | None] = field(default_factory=dict)
    """Key of a candidate that ran in its trace -> its result now."""
    issue_shape: ResultShape | None = None
    verdicts: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Repaired SQL key -> (evaluator status, reason)."""
    setup_error: str = ""


def failing_keys(views: list[RunTask], issue_key: str) -> dict[str, str]:
    """Failing candidate key -> SQL, over every run's view of the task (issue SQL left out)."""
    found: dict[str, str] = {}
    for view in views:
        for key, cand in view.candidates.items():
            if cand.status != "ok" and key != issue_key:
                found.setdefault(key, cand.sql)
    return found


def measure_task(
    item: ScoredTask, views: list[RunTask], evaluator: Evaluator, cap_s: float
) -> TaskFindings:
    """Prepare the task's database, repair its failing candidates, run the others."""
    dialect = project_dialect(item.task.dialect)
    issue_sql = ";\n".join(item.task.issue_sql)
    failing = failing_keys(views, canonical(issue_sql, dialect))
    findings = TaskFindings()
    if not failing:
        return findings
    with ExitStack() as stack:
        try:
            executor, chain = agent_database(stack, evaluator, item, cap_s)
        except SetupError as exc:
            findings.setup_error = str(exc)
            return findings
        if issue_sql.strip():
            findings.issue_shape = result_shape(issue_sql, executor.execute(issue_sql), dialect)
        for key, sql in failing.items():
            findings.repairs[key] = repair_candidate(executor, chain, sql, dialect)
        for view in views:
            for key, cand in view.candidates.items():
                if cand.status == "ok" and key not in findings.shapes:
                    findings.shapes[key] = result_shape(
                        cand.sql, executor.execute(cand.sql), dialect
                    )
    score_repairs(item, findings, evaluator, dialect)
    return findings


class SetupError(Exception):
    """The task's database could not be made (its text is one line)."""


def agent_database(
    stack: ExitStack, evaluator: Evaluator, item: ScoredTask, cap_s: float
) -> tuple[IsolatedExecutor, RuleChain]:
    """The database the bench gives the agent for `item` (dropped and closed by `stack`) and
    the rule chain on it, with the issue SQL as reference; SetupError when it cannot be made."""
    factory = evaluator.factory(item.task.dialect)
    if factory is None:
        raise SetupError(f"no {item.task.dialect} server")
    try:
        prepared = prepare_database(factory, item.task)
        stack.callback(prepared.drop)
        inner = open_agent_executor(prepared.url)
        stack.callback(inner.close)
    except Exception as exc:
        raise SetupError(f"{type(exc).__name__}: {one_line(str(exc))}") from exc
    executor = IsolatedExecutor(inner, cap_s)
    facts = schema_facts(executor.reflect(sample_rows=3), executor.dialect)
    issue_sql = ";\n".join(item.task.issue_sql)
    chain = RuleChain(executor, facts, executor.dialect, reference_sql=issue_sql or None)
    return executor, chain


def score_repairs(
    item: ScoredTask, findings: TaskFindings, evaluator: Evaluator, dialect: str
) -> None:
    """The evaluator's verdict on every distinct repair that runs and changed the SQL."""
    for repair in findings.repairs.values():
        if not repair.useful:
            continue
        key = canonical(repair.sql, dialect)
        if key not in findings.verdicts:
            scored = evaluator.score(item, statements_of(repair.sql, dialect))
            findings.verdicts[key] = (scored.status.value, one_line(scored.reason, 200))


# ----------------------------------------------------------------------------- rows


def any_candidate_passes(view: RunTask, item: ScoredTask, evaluator: Evaluator) -> bool:
    """Whether the run generated a passing SQL for the task (a candidate or its final one)."""
    if view.record.status == Status.PASSED:
        return True
    lines = load_candidate_lines(view.directory) or {}
    line = lines.get(view.record.key)
    if line is None or not line.matches(view.record):
        line = CandidateScorer(view.directory, evaluator).line(view.record, item)
    return line.any_pass


def rows_of(
    view: RunTask, findings: TaskFindings, issue_key: str, dialect: str
) -> list[dict[str, Any]]:
    """One row per failing distinct candidate of one run's task."""
    ran = {k: findings.shapes.get(k) for k, c in view.candidates.items() if c.status == "ok"}
    fingerprints = {s.fingerprint for s in ran.values() if s is not None}
    rows: list[dict[str, Any]] = []
    for key, cand in view.candidates.items():
        if cand.status == "ok" or key == issue_key or key not in findings.repairs:
            continue
        repair = findings.repairs[key]
        repaired_key = canonical(repair.sql, dialect) if repair.useful else ""
        status, reason = findings.verdicts.get(repaired_key, ("", ""))
        shape = repair.shape
        rows.append(
            {
                "run": view.run,
                "task": "/".join(view.record.key),
                "origin": cand.origin,
                "trace_status": cand.status,
                "occurrences": cand.occurrences,
                "error": repair.error,
                "rerun_status": repair.rerun_status,
                "attempted": repair.attempted,
                "chain_ok": repair.ok,
                "changed": repair.changed,
                "repaired": repair.useful,
                "rules": repair.rules,
                "fired": repair.fired,
                "crash": repair.crash,
                "verdict": status,
                "reason": reason,
                "agrees": bool(repair.useful and shape and shape.fingerprint in fingerprints),
                "same_as_issue": bool(repair.useful and same_rows(shape, findings.issue_shape)),
                "already_candidate": bool(repaired_key and repaired_key in view.candidates),
                "seconds": repair.seconds,
                "sql": cand.sql,
                "repaired_sql": repair.sql if repair.useful else "",
            }
        )
    return rows


# ----------------------------------------------------------------------------- report


def percent(part: int, whole: int) -> str:
    return f"{part} ({100 * part / whole:.0f}%)" if whole else "0"


def summary(rows: list[dict[str, Any]], new_pass: set[str]) -> dict[str, Any]:
    repaired = [r for r in rows if r["repaired"]]
    return {
        "failing": len(rows),
        "attempted": sum(r["attempted"] for r in rows),
        "runs_now": sum(r["rerun_status"] == "ok" for r in rows),
        "repaired": percent(len(repaired), len(rows)),
        "passing": sum(r["verdict"] == Status.PASSED.value for r in repaired),
        "new_pass_tasks": len(new_pass),
        "agrees": sum(r["agrees"] for r in repaired),
        "same_as_issue": sum(r["same_as_issue"] for r in repaired),
        "already_cand": sum(r["already_candidate"] for r in repaired),
        "crashes": sum(bool(r["crash"]) for r in rows),
    }


def print_table(per_run: dict[str, tuple[list[dict[str, Any]], set[str]]]) -> None:
    columns = [
        "failing",
        "attempted",
        "runs_now",
        "repaired",
        "passing",
        "new_pass_tasks",
        "agrees",
        "same_as_issue",
        "already_cand",
        "crashes",
    ]
    lines = [["run", *columns]]
    everything: list[dict[str, Any]] = []
    new_all: set[str] = set()
    for run, (rows, new_pass) in per_run.items():
        numbers = summary(rows, new_pass)
        lines.append([run, *(str(numbers[c]) for c in columns)])
        everything += rows
        new_all |= {f"{run}:{t}" for t in new_pass}
    total = summary(everything, new_all)
    lines.append(["TOTAL", *(str(total[c]) for c in columns)])
    widths = [max(len(line[i]) for line in lines) for i in range(len(columns) + 1)]
    for line in lines:
        print(
            "  ".join(
                cell.rjust(w) if i else cell.ljust(w)
                for i, (cell, w) in enumerate(zip(line, widths, strict=True))
            )
        )
    print_rules(per_run, everything)


def print_rules(
    per_run: dict[str, tuple[list[dict[str, Any]], set[str]]], everything: list[dict[str, Any]]
) -> None:
    print("\nrules in the repaired runnable statements (count of statements; passing):")
    for run, (rows, _) in [*per_run.items(), ("TOTAL", (everything, set()))]:
        counts: Counter[str] = Counter()
        passing: Counter[str] = Counter()
        for row in rows:
            if row["repaired"]:
                for rule in dict.fromkeys(row["rules"]):
                    counts[rule] += 1
                    passing[rule] += row["verdict"] == Status.PASSED.value
        text = ", ".join(f"{rule} {n}; {passing[rule]}" for rule, n in counts.most_common())
        print(f"  {run}: {text or '-'}")
    errors: Counter[str] = Counter(
        row["error"].split(":")[0] + ":" + " ".join(row["error"].split(":")[1:2])[:50]
        for row in everything
    )
    print("\nmost frequent failures (first words):")
    for text, n in errors.most_common(8):
        print(f"  {n:4d}  {text}")


# ----------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", action="append", dest="runs", help="run name or directory")
    parser.add_argument("--results", type=Path, default=Path("results/bird-critic-dev"))
    parser.add_argument("--data", type=Path, default=Path("/work/shared/data/bird-critic"))
    parser.add_argument("--out", type=Path, default=Path("artifacts/candidate-rule-repairs"))
    parser.add_argument("--pg-url", default=None)
    parser.add_argument("--mysql-url", default=None)
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per statement")
    parser.add_argument("--limit-tasks", type=int, default=None)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.getLogger("sqlglot").setLevel(logging.ERROR)
    runs = args.runs or DEFAULT_RUNS
    by_task = load_runs(args.results, runs)
    ids = sorted("/".join(key) for key in by_task)
    items = {
        i.key: i for i in load_items(args.data / "tasks", args.data / "dev", TaskFilter(ids=ids))
    }
    keys = [k for k in sorted(by_task) if k in items][: args.limit_tasks]
    args.out.mkdir(parents=True, exist_ok=True)
    per_run: dict[str, tuple[list[dict[str, Any]], set[str]]] = {
        Path(r).name: ([], set()) for r in runs
    }
    options = EvalOptions(servers=ServerURLs.resolve(args.pg_url, args.mysql_url))
    started = time.perf_counter()
    with Evaluator(options) as evaluator, (args.out / "rows.jsonl").open("w") as out:
        for number, key in enumerate(keys, 1):
            item, views = items[key], by_task[key]
            task_started = time.perf_counter()
            findings = measure_task(item, views, evaluator, args.timeout)
            dialect = project_dialect(item.task.dialect)
            issue_key = canonical(";\n".join(item.task.issue_sql), dialect)
            for view in views:
                rows = rows_of(view, findings, issue_key, dialect)
                per_run[view.run][0].extend(rows)
                for row in rows:
                    out.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
                passing = any(r["verdict"] == Status.PASSED.value for r in rows)
                if passing and not any_candidate_passes(view, item, evaluator):
                    per_run[view.run][1].add("/".join(key))
            out.flush()
            useful = [r for r in findings.repairs.values() if r.useful]
            passed = sum(v[0] == Status.PASSED.value for v in findings.verdicts.values())
            print(
                f"[{number}/{len(keys)}] {'/'.join(key)}: {len(findings.repairs)} failing, "
                f"{len(useful)} repaired, {passed} passing"
                + (f", setup error: {findings.setup_error}" if findings.setup_error else "")
                + f" ({time.perf_counter() - task_started:.1f}s, "
                f"{time.perf_counter() - started:.0f}s in all)",
                file=sys.stderr,
                flush=True,
            )
    print_table(per_run)
    print(f"\nrows: {args.out / 'rows.jsonl'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
