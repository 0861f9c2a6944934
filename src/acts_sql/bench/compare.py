"""Methods side by side: several `acts-sql bench` runs in one report.

Every run is compared on the tasks that all runs scored (evaluable in each),
so the numbers share one denominator. Tables follow the paper's: accuracy by
dialect and overall (Table 1), by category and for the ablations (Table 2),
and cost per task (Table 3). ``correct→broken`` counts tasks the baseline
(``raw`` by default) solves and a method does not; ``broken→correct`` the
reverse.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, Field

from acts_sql.bench.errors import BenchDataError
from acts_sql.bench.loader import read_jsonl
from acts_sql.bench.models import Status, TaskKey
from acts_sql.bench.report import MethodUsage, Tally, usage_of
from acts_sql.bench.runner import RECORDS, BenchRecord


class MethodRun(BaseModel):
    """One run directory: its method, backend and records."""

    directory: str
    method: str
    llm: str
    records: list[BenchRecord]


def load_run(directory: Path) -> MethodRun:
    path = directory / RECORDS
    if not path.exists():
        raise BenchDataError(f"no {RECORDS} in {directory}: not an `acts-sql bench` output")
    records = [BenchRecord.model_validate(data) for _, data in read_jsonl(path)]
    if not records:
        raise BenchDataError(f"{path} is empty")
    report = directory / "report.json"
    llm = records[0].llm
    if report.exists():
        llm = json.loads(report.read_text()).get("llm", llm)
    return MethodRun(directory=str(directory), method=records[0].method, llm=llm, records=records)


class ComparisonRow(BaseModel):
    """One method's numbers on the common tasks."""

    method: str
    llm: str
    directory: str
    overall: Tally
    by_dialect: dict[str, Tally]
    by_category: dict[str, Tally]
    usage: MethodUsage
    correct_to_broken: int | None = None
    broken_to_correct: int | None = None


class Comparison(BaseModel):
    """``comparison.json``."""

    baseline: str | None
    tasks: int
    rows: list[ComparisonRow] = Field(default_factory=list)


def _scored(run: MethodRun) -> dict[TaskKey, BenchRecord]:
    return {r.key: r for r in run.records if r.status != Status.NOT_EVALUABLE}


def compare(runs: list[MethodRun], baseline: str | None = "raw") -> Comparison:
    """The side-by-side numbers of ``runs`` on the tasks they all scored."""
    if not runs:
        raise BenchDataError("nothing to compare")
    scored = [_scored(run) for run in runs]
    common = set.intersection(*(set(s) for s in scored)) if scored else set()
    base = next((s for run, s in zip(runs, scored, strict=True) if run.method == baseline), None)
    rows = []
    for run, records in zip(runs, scored, strict=True):
        mine = [records[key] for key in sorted(common)]
        results = [r.result() for r in mine]
        row = ComparisonRow(
            method=run.method,
            llm=run.llm,
            directory=run.directory,
            overall=Tally.of(results),
            by_dialect=_by(results, "dialect"),
            by_category=_by(results, "category"),
            usage=usage_of(list(mine)),
        )
        if base is not None and run.method != baseline:
            was = {k for k in common if base[k].status == Status.PASSED}
            now = {k for k in common if records[k].status == Status.PASSED}
            row.correct_to_broken = len(was - now)
            row.broken_to_correct = len(now - was)
        rows.append(row)
    return Comparison(baseline=baseline if base is not None else None, tasks=len(common), rows=rows)


def _by(results: list, field: str) -> dict[str, Tally]:
    groups: dict[str, list] = {}
    for result in results:
        groups.setdefault(getattr(result, field), []).append(result)
    return {name: Tally.of(groups[name]) for name in sorted(groups)}


def _pct(tally: Tally | None) -> str:
    if tally is None or tally.accuracy is None:
        return "–"
    return f"{tally.accuracy:.1f}"


def render_comparison(comparison: Comparison) -> str:
    """``comparison.md``: the paper-shaped tables."""
    rows = comparison.rows
    dialects = sorted({d for r in rows for d in r.by_dialect})
    categories = sorted({c for r in rows for c in r.by_category})
    lines = [
        "# Methods side by side (BIRD-CRITIC)",
        "",
        f"{comparison.tasks} tasks scored by every run. Accuracy in percent.",
        "",
        "### Table 1: accuracy by dialect",
        "",
        "| method | LLM | "
        + " | ".join(dialects)
        + " | overall | correct→broken | broken→correct |",
        "|---|---|" + "---:|" * (len(dialects) + 3),
    ]
    for r in rows:
        cells = [_pct(r.by_dialect.get(d)) for d in dialects]
        c2b = "–" if r.correct_to_broken is None else str(r.correct_to_broken)
        b2c = "–" if r.broken_to_correct is None else str(r.broken_to_correct)
        lines.append(
            f"| {r.method} | {r.llm} | "
            + " | ".join(cells)
            + f" | {_pct(r.overall)} | {c2b} | {b2c} |"
        )
    lines += [
        "",
        "### Table 2: accuracy by category (methods and ablations)",
        "",
        "| method | " + " | ".join(categories) + " | overall |",
        "|---|" + "---:|" * (len(categories) + 1),
    ]
    for r in rows:
        cells = [_pct(r.by_category.get(c)) for c in categories]
        lines.append(f"| {r.method} | " + " | ".join(cells) + f" | {_pct(r.overall)} |")
    lines += [
        "",
        "### Table 3: cost per task (mean / median / p95)",
        "",
        "| method | LLM calls | tokens | seconds | accepted |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        u = r.usage
        spread = [
            f"{s.mean:g} / {s.median:g} / {s.p95:g}" for s in (u.llm_calls, u.tokens, u.seconds)
        ]
        lines.append(f"| {r.method} | " + " | ".join(spread) + f" | {u.accepted}/{u.tasks} |")
    if comparison.baseline:
        lines += [
            "",
            f"correct→broken and broken→correct are counted against `{comparison.baseline}`.",
        ]
    return "\n".join(lines) + "\n"


def write_comparison(directory: Path, comparison: Comparison) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "comparison.json").write_text(comparison.model_dump_json(indent=1) + "\n")
    (directory / "comparison.md").write_text(render_comparison(comparison))
