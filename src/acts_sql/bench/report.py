"""Reports of an evaluation: accuracy overall, by set, dialect and category, as JSON and markdown.

Accuracy is over the tasks that could be scored here (``not_evaluable`` ones
are counted separately, never as failures).
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, Field

from acts_sql.bench.models import EvalMode, Status, TaskResult

OFFICIAL_ENGINES = {
    "PostgreSQL": "PostgreSQL 14.12 (postgres:14.12 image, with PostGIS)",
    "MySQL": "MySQL 8.4.0",
    "SQLite": "SQLite 3.44 or newer (aggregate ORDER BY), Python 3.10 sqlite3",
    "SQLServer": "SQL Server 2022",
    "Oracle": "Oracle 19c",
}
ENGINE_NOTES = [
    "The engines here differ from the official images (see the table): a verdict that depends "
    "on a version-specific feature or on collation may differ.",
    "PostgreSQL databases are created from template0 in UTF8 with ICU en-US collation where "
    "available (official: en_US.utf8) and time zone Asia/Hong_Kong (official container).",
    "MySQL tasks run on MariaDB here; its EXPLAIN FORMAT=JSON has no query_cost, so the MySQL "
    "cost comparison (performance_compare_by_qep) returns 0 on MariaDB.",
    f"Python {sys.version_info.major}.{sys.version_info.minor} runs the evaluator and its "
    "sqlite3 module (official: 3.10).",
    "Statement time limits: 60 s, 15 s with WITH RECURSIVE (also for SQLite and MariaDB, "
    "where the official evaluator has none or 120 s). Row cap 10,000.",
]


class Tally(BaseModel):
    """Counts of one group of tasks, and its accuracy over the evaluable ones."""

    tasks: int = 0
    evaluable: int = 0
    passed: int = 0
    failed: int = 0
    error: int = 0
    timeout: int = 0
    not_evaluable: int = 0
    accuracy: float | None = None
    """Percent of the evaluable tasks that passed (None when none is evaluable)."""

    @classmethod
    def of(cls, results: Iterable[TaskResult]) -> Tally:
        tally = cls()
        for result in results:
            tally.tasks += 1
            name = result.status.value
            setattr(tally, name, getattr(tally, name) + 1)
        tally.evaluable = tally.tasks - tally.not_evaluable
        if tally.evaluable:
            tally.accuracy = round(100.0 * tally.passed / tally.evaluable, 2)
        return tally


class EvalReport(BaseModel):
    """``report.json``."""

    benchmark: str = "BIRD-CRITIC"
    mode: EvalMode
    created: str = Field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    inputs: dict[str, str] = Field(default_factory=dict)
    overall: Tally
    by_set: dict[str, Tally]
    by_dialect: dict[str, Tally]
    by_category: dict[str, Tally]
    by_set_dialect: dict[str, Tally]
    engines: dict[str, str] = Field(default_factory=dict)
    official_engines: dict[str, str] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    passed_ids: list[str] = Field(default_factory=list)
    unexpected: list[str] = Field(default_factory=list)
    """gold mode: evaluable tasks whose solution did not pass; issue mode: issue SQL that passed."""
    absent_tables: list[str] = Field(default_factory=list)
    """Errors on a table the task does not create (SQL written for the original database)."""
    today: str | None = None
    """``--today``: the day the clock was fixed to (SQLite and MySQL), or None (the real clock)."""
    clock_dependent: list[str] = Field(default_factory=list)
    """Evaluated tasks that read the clock and were not run on a fixed one: the verdict can
    change from day to day."""
    clock_fixed: list[str] = Field(default_factory=list)
    """Evaluated tasks that read the clock and ran on the ``--today`` clock."""
    seconds: float = 0.0


def _grouped(results: list[TaskResult], key: Callable[[TaskResult], str]) -> dict[str, Tally]:
    groups: dict[str, list[TaskResult]] = {}
    for result in results:
        groups.setdefault(key(result), []).append(result)
    return {name: Tally.of(groups[name]) for name in sorted(groups)}


def _label(result: TaskResult) -> str:
    return f"{result.set}/{result.instance_id}"


def build_report(
    results: list[TaskResult],
    *,
    mode: EvalMode,
    engines: dict[str, str] | None = None,
    inputs: dict[str, str] | None = None,
    seconds: float = 0.0,
    today: date | None = None,
) -> EvalReport:
    """The report of one evaluation run."""
    scored = [r for r in results if r.status != Status.NOT_EVALUABLE]
    if mode == EvalMode.GOLD:
        unexpected = [_label(r) for r in scored if r.status != Status.PASSED]
    elif mode == EvalMode.ISSUE:
        unexpected = [_label(r) for r in scored if r.status == Status.PASSED]
    else:
        unexpected = []
    dialects = sorted({r.dialect for r in results})
    return EvalReport(
        mode=mode,
        inputs=inputs or {},
        overall=Tally.of(results),
        by_set=_grouped(results, lambda r: r.set),
        by_dialect=_grouped(results, lambda r: r.dialect),
        by_category=_grouped(results, lambda r: r.category),
        by_set_dialect=_grouped(results, lambda r: f"{r.set} / {r.dialect}"),
        engines=engines or {},
        official_engines={d: OFFICIAL_ENGINES.get(d, "?") for d in dialects},
        notes=ENGINE_NOTES,
        passed_ids=[_label(r) for r in results if r.status == Status.PASSED],
        unexpected=unexpected,
        absent_tables=[_label(r) for r in results if r.absent_table],
        today=today.isoformat() if today else None,
        clock_dependent=[_label(r) for r in scored if r.clock and not r.clock_fixed],
        clock_fixed=[_label(r) for r in scored if r.clock_fixed],
        seconds=round(seconds, 1),
    )


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _table(title: str, groups: dict[str, Tally]) -> list[str]:
    lines = [
        f"### {title}",
        "",
        "| group | tasks | evaluable | passed | failed | error | timeout | accuracy % |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, t in groups.items():
        lines.append(
            f"| {name} | {t.tasks} | {t.evaluable} | {t.passed} | {t.failed} | {t.error} "
            f"| {t.timeout} | {_pct(t.accuracy)} |"
        )
    return [*lines, ""]


def render_markdown(report: EvalReport) -> str:
    """``report.md``: the same numbers for people."""
    t = report.overall
    what = {
        EvalMode.PRED: "predictions",
        EvalMode.GOLD: "the solutions (gold; every evaluable task should pass)",
        EvalMode.ISSUE: "the issue SQL (every evaluable task should fail)",
    }[report.mode]
    title = f"# BIRD-CRITIC evaluation: {what}"
    if isinstance(report, BenchReport):
        title = f"# BIRD-CRITIC benchmark run: method `{report.method}`"
    lines = [
        title,
        "",
        f"Accuracy **{_pct(t.accuracy)} %**: {t.passed} of {t.evaluable} evaluable tasks passed "
        f"({t.tasks} tasks, {t.not_evaluable} not evaluable here; failed {t.failed}, "
        f"error {t.error}, timeout {t.timeout}). {report.seconds:g} s.",
        "",
    ]
    for key, value in report.inputs.items():
        lines.append(f"- {key}: `{value}`")
    if report.inputs:
        lines.append("")
    if report.unexpected:
        label = (
            "Solutions that did not pass"
            if report.mode == EvalMode.GOLD
            else "Issue SQL that passed"
        )
        lines += [f"**{label}:** {', '.join(report.unexpected)}", ""]
    if report.absent_tables:
        lines += [
            f"{len(report.absent_tables)} errors come from SQL that uses a table the task does "
            "not create (written for the original database, which the official evaluator has): "
            + ", ".join(report.absent_tables),
            "",
        ]
    lines += clock_lines(report)
    if isinstance(report, BenchReport):
        lines += [f"Method `{report.method}`, LLM `{report.llm}`.", ""]
        lines += usage_lines(report.usage)
    lines += _table("By dialect", report.by_dialect)
    lines += _table("By category", report.by_category)
    lines += _table("By set", report.by_set)
    lines += _table("By set and dialect", report.by_set_dialect)
    lines += ["### Engines", "", "| dialect | here | official |", "|---|---|---|"]
    for dialect in report.official_engines:
        here = report.engines.get(dialect, "?")
        lines.append(f"| {dialect} | {here} | {report.official_engines[dialect]} |")
    lines += ["", *[f"- {note}" for note in report.notes], ""]
    return "\n".join(lines)


def clock_lines(report: EvalReport) -> list[str]:
    """What the report says about tasks that read the clock."""
    lines = []
    if report.clock_fixed:
        lines.append(
            f"{len(report.clock_fixed)} tasks read the clock and ran with it fixed at "
            f"{report.today} 12:00:00 UTC (`--today`)."
        )
    if report.clock_dependent:
        why = (
            "PostgreSQL's clock (and Python's in test code, and MySQL's SYSDATE()) cannot be "
            "fixed here"
            if report.today
            else "pass `--today YYYY-MM-DD` to fix the clock for SQLite and MySQL"
        )
        lines.append(
            f"{len(report.clock_dependent)} tasks read the current date or time, so their "
            f"verdict can change from day to day ({why}): " + ", ".join(report.clock_dependent)
        )
    return [*lines, ""] if lines else []


def write_results(path: Path, results: Iterable[TaskResult]) -> None:
    """``results.jsonl``: one object per task."""
    with path.open("w", encoding="utf-8") as handle:
        for result in results:
            handle.write(result.model_dump_json() + "\n")


def write_report(directory: Path, report: EvalReport) -> None:
    """``report.json`` and ``report.md`` in ``directory``."""
    (directory / "report.json").write_text(
        json.dumps(report.model_dump(mode="json"), indent=1, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    (directory / "report.md").write_text(render_markdown(report), encoding="utf-8")


# -- method runs (acts-sql bench) ------------------------------------------------------------


class Spread(BaseModel):
    """Mean, median and 95th percentile of a per-task quantity."""

    mean: float = 0.0
    median: float = 0.0
    p95: float = 0.0

    @classmethod
    def of(cls, values: list[float]) -> Spread:
        if not values:
            return cls()
        ordered = sorted(values)
        rank = max(0, math.ceil(0.95 * len(ordered)) - 1)
        return cls(
            mean=round(statistics.fmean(ordered), 2),
            median=round(statistics.median(ordered), 2),
            p95=round(ordered[rank], 2),
        )


class MethodUsage(BaseModel):
    """Per-task cost of a method over the tasks it ran on."""

    tasks: int = 0
    accepted: int = 0
    llm_calls: Spread = Field(default_factory=Spread)
    tokens: Spread = Field(default_factory=Spread)
    """Prompt plus completion tokens."""
    seconds: Spread = Field(default_factory=Spread)


class BenchReport(EvalReport):
    """``report.json`` of `acts-sql bench`: the evaluation plus the method and its cost."""

    method: str
    llm: str
    usage: MethodUsage


class UsageRecord(Protocol):
    """What a usage summary reads from one task's record."""

    ran: bool
    accepted: bool
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    seconds: float

    def result(self) -> TaskResult: ...


def usage_of(records: Sequence[UsageRecord]) -> MethodUsage:
    ran = [r for r in records if r.ran]
    return MethodUsage(
        tasks=len(ran),
        accepted=sum(1 for r in ran if r.accepted),
        llm_calls=Spread.of([float(r.llm_calls) for r in ran]),
        tokens=Spread.of([float(r.prompt_tokens + r.completion_tokens) for r in ran]),
        seconds=Spread.of([r.seconds for r in ran]),
    )


def build_bench_report(
    records: Sequence[UsageRecord],
    *,
    method: str,
    llm: str,
    engines: dict[str, str] | None = None,
    inputs: dict[str, str] | None = None,
    seconds: float = 0.0,
    today: date | None = None,
) -> BenchReport:
    base = build_report(
        [r.result() for r in records],
        mode=EvalMode.PRED,
        engines=engines,
        inputs=inputs,
        seconds=seconds,
        today=today,
    )
    return BenchReport(**base.model_dump(), method=method, llm=llm, usage=usage_of(records))


def usage_lines(usage: MethodUsage) -> list[str]:
    lines = [
        "### Cost per task",
        "",
        f"{usage.tasks} tasks run, {usage.accepted} with an accepted candidate.",
        "",
        "| per task | mean | median | p95 |",
        "|---|---:|---:|---:|",
    ]
    for name, spread in (
        ("LLM calls", usage.llm_calls),
        ("tokens", usage.tokens),
        ("seconds", usage.seconds),
    ):
        lines.append(f"| {name} | {spread.mean:g} | {spread.median:g} | {spread.p95:g} |")
    return [*lines, ""]
