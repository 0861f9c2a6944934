"""Methods side by side: several `acts-sql bench` runs in one report.

Every run is compared on the tasks that all runs scored (evaluable in each),
so the numbers share one denominator. Tables follow the paper's: accuracy by
dialect and overall (Table 1), by category and for the ablations (Table 2),
and cost per task (Table 3); Table 4 separates generation from selection and
reports trust (wrong acceptances from the records; the candidate columns from
each run's ``candidates.jsonl``, written by `acts-sql bench candidates`, and
"-" for a run without one). ``correct→broken`` counts tasks the baseline
(the run named ``raw`` by default) solves and a method does not;
``broken→correct`` the reverse.

Each run has a name, its column label and key: given (``names``), else its
method label, else, when two runs share a method label (two ``acts`` runs with
different models or code), its directory name.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from pydantic import BaseModel, Field

from acts_sql.bench.candidates import CandidateLine, load_candidate_lines
from acts_sql.bench.charts import (
    ChartData,
    ChartFiles,
    DialectAccuracy,
    RunPoint,
    chart_section,
    write_charts,
)
from acts_sql.bench.errors import BenchDataError
from acts_sql.bench.loader import read_jsonl
from acts_sql.bench.machine import UNKNOWN
from acts_sql.bench.models import Status, TaskKey
from acts_sql.bench.report import MethodUsage, Tally, usage_of
from acts_sql.bench.runner import RECORDS, BenchRecord


class MethodRun(BaseModel):
    """One run directory: its method, backend, records and scored candidates (if any)."""

    directory: str
    method: str
    llm: str
    records: list[BenchRecord]
    name: str | None = None
    """The run's label in the comparison (None: chosen by `compare`)."""
    candidates: dict[TaskKey, CandidateLine] | None = None
    """``candidates.jsonl`` by task; None when the run has none."""


def load_run(directory: Path, name: str | None = None) -> MethodRun:
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
    return MethodRun(
        directory=str(directory),
        method=records[0].method,
        llm=llm,
        records=records,
        name=name,
        candidates=load_candidate_lines(directory),
    )


def run_names(runs: list[MethodRun], names: list[str] | None = None) -> list[str]:
    """A unique name per run: ``names``; else each run's own name or method label, and where
    those collide the directory name (then ``parent/name``, then a number)."""
    if names is not None:
        if len(names) != len(runs):
            raise BenchDataError(f"{len(names)} names for {len(runs)} runs")
        chosen = [n.strip() for n in names]
        if any(not n for n in chosen) or len(set(chosen)) != len(chosen):
            raise BenchDataError(f"run names must be non-empty and distinct: {names}")
        return chosen
    chosen = [run.name or run.method for run in runs]
    fallbacks = [
        lambda run: Path(run.directory).name,
        lambda run: "/".join(Path(run.directory).parts[-2:]),
    ]
    for fallback in fallbacks:
        clashing = [i for i, n in enumerate(chosen) if chosen.count(n) > 1]
        for index in clashing:
            if runs[index].name is None:
                chosen[index] = fallback(runs[index]) or chosen[index]
    clashing_names = {n for n in chosen if chosen.count(n) > 1}
    seen: dict[str, int] = {}
    for index, name in enumerate(list(chosen)):
        if name in clashing_names:
            seen[name] = seen.get(name, 0) + 1
            chosen[index] = f"{name}#{seen[name]}"
    return chosen


class TrustSummary(BaseModel):
    """Generation versus selection, and trust, over the common tasks of one run.

    ``wrong_acceptances`` / ``accepted`` come from the records (every run has
    them). The rest come from ``candidates.jsonl`` and are None without it;
    ``covered`` is the number of common tasks it has an up-to-date line for
    (same verdict and acceptance as the record), and the shares are over those.
    """

    accepted: int = 0
    wrong_acceptances: int = 0
    """Tasks the method marked accepted that did not pass."""
    covered: int = 0
    any_pass: int | None = None
    """Tasks where some candidate (or the final prediction) passes: generated."""
    final_passed: int | None = None
    """Of the covered tasks, those whose final prediction passes: also selected."""
    not_selected: int | None = None
    """Tasks where a candidate passes and the final prediction does not."""
    any_pass_share: float | None = None
    """Percent of the covered tasks with a passing candidate."""
    candidates_per_task: float | None = None
    """Mean distinct candidates per task."""
    duplicates_per_task: float | None = None
    """Mean duplicate candidate events per task."""
    execution_share: float | None = None
    """Percent of all distinct candidates (pooled over the tasks) that executed (status ok)."""


def trust_of(
    records: list[BenchRecord], lines: dict[TaskKey, CandidateLine] | None
) -> TrustSummary:
    """The `TrustSummary` of the records of the common tasks."""
    summary = TrustSummary(
        accepted=sum(1 for r in records if r.accepted),
        wrong_acceptances=sum(1 for r in records if r.accepted and r.status != Status.PASSED),
    )
    if lines is None:
        return summary
    mine = [lines[r.key] for r in records if r.key in lines and lines[r.key].matches(r)]
    summary.covered = len(mine)
    if not mine:
        return summary
    candidates = sum(line.candidates for line in mine)
    summary.any_pass = sum(1 for line in mine if line.any_pass)
    summary.final_passed = sum(1 for line in mine if line.final_passed)
    summary.not_selected = sum(1 for line in mine if line.any_pass and not line.final_passed)
    summary.any_pass_share = round(100.0 * summary.any_pass / len(mine), 2)
    summary.candidates_per_task = round(candidates / len(mine), 2)
    summary.duplicates_per_task = round(sum(line.duplicates for line in mine) / len(mine), 2)
    if candidates:
        executing = sum(line.executing for line in mine)
        summary.execution_share = round(100.0 * executing / candidates, 2)
    return summary


class ComparisonRow(BaseModel):
    """One method's numbers on the common tasks."""

    name: str
    """The run's label in the tables (unique in a comparison)."""
    method: str
    llm: str
    directory: str
    scored: int = 0
    """Tasks this run scored (evaluable), common or not."""
    overall: Tally
    by_dialect: dict[str, Tally]
    by_category: dict[str, Tally]
    usage: MethodUsage
    trust: TrustSummary = Field(default_factory=TrustSummary)
    correct_to_broken: int | None = None
    broken_to_correct: int | None = None
    machines: dict[str, int] = Field(default_factory=dict)
    """Tasks per machine the row's seconds were measured on (`bench.machine`)."""


class Comparison(BaseModel):
    """``comparison.json``."""

    baseline: str | None
    tasks: int
    rows: list[ComparisonRow] = Field(default_factory=list)


def _scored(run: MethodRun) -> dict[TaskKey, BenchRecord]:
    return {r.key: r for r in run.records if r.status != Status.NOT_EVALUABLE}


def _baseline_index(runs: list[MethodRun], names: list[str], baseline: str | None) -> int | None:
    """The run named ``baseline``; else the only run whose method label is ``baseline``."""
    if baseline is None:
        return None
    if baseline in names:
        return names.index(baseline)
    same_method = [i for i, run in enumerate(runs) if run.method == baseline]
    return same_method[0] if len(same_method) == 1 else None


def compare(
    runs: list[MethodRun], baseline: str | None = "raw", names: list[str] | None = None
) -> Comparison:
    """The side-by-side numbers of ``runs`` on the tasks they all scored.

    ``names`` labels the runs (see `run_names`); ``baseline`` is the name of the
    run that correct→broken is counted against (or, failing that, the method
    label of exactly one run).
    """
    if not runs:
        raise BenchDataError("nothing to compare")
    labels = run_names(runs, names)
    scored = [_scored(run) for run in runs]
    common = set.intersection(*(set(s) for s in scored)) if scored else set()
    base_index = _baseline_index(runs, labels, baseline)
    base = scored[base_index] if base_index is not None else None
    rows = []
    for index, (run, records) in enumerate(zip(runs, scored, strict=True)):
        mine = [records[key] for key in sorted(common)]
        results = [r.result() for r in mine]
        row = ComparisonRow(
            name=labels[index],
            method=run.method,
            llm=run.llm,
            directory=run.directory,
            scored=len(records),
            overall=Tally.of(results),
            by_dialect=_by(results, "dialect"),
            by_category=_by(results, "category"),
            usage=usage_of(list(mine)),
            trust=trust_of(mine, run.candidates),
            machines=dict(Counter(r.machine or UNKNOWN for r in mine)),
        )
        if base is not None and index != base_index:
            was = {k for k in common if base[k].status == Status.PASSED}
            now = {k for k in common if records[k].status == Status.PASSED}
            row.correct_to_broken = len(was - now)
            row.broken_to_correct = len(now - was)
        rows.append(row)
    return Comparison(
        baseline=labels[base_index] if base_index is not None else None,
        tasks=len(common),
        rows=rows,
    )


def chart_data(comparison: Comparison) -> ChartData:
    """The charts' numbers (`bench.charts`), taken from ``comparison`` (no recomputation)."""
    dialects = sorted({d for row in comparison.rows for d in row.by_dialect})
    return ChartData(
        tasks=comparison.tasks,
        points=[
            RunPoint(name=r.name, accuracy=r.overall.accuracy, mean_calls=r.usage.llm_calls.mean)
            for r in comparison.rows
        ],
        dialects=[
            DialectAccuracy(
                dialect=d,
                accuracy={
                    r.name: (r.by_dialect[d].accuracy if d in r.by_dialect else None)
                    for r in comparison.rows
                },
            )
            for d in dialects
        ],
    )


def _by(results: list, field: str) -> dict[str, Tally]:
    groups: dict[str, list] = {}
    for result in results:
        groups.setdefault(getattr(result, field), []).append(result)
    return {name: Tally.of(groups[name]) for name in sorted(groups)}


def _pct(tally: Tally | None) -> str:
    if tally is None or tally.accuracy is None:
        return "–"
    return f"{tally.accuracy:.1f}"


def _num(value: float | None, suffix: str = "") -> str:
    return "-" if value is None else f"{value:g}{suffix}"


def _share(count: int | None, total: int, percent: float | None) -> str:
    if count is None or percent is None:
        return "-"
    return f"{count}/{total} ({percent:.1f} %)"


def _table_head(cells: list[str], numeric: int) -> list[str]:
    """A markdown table head: the header cells, then left-aligned text columns and
    ``numeric`` right-aligned ones at the end."""
    text = len(cells) - numeric
    return ["| " + " | ".join(cells) + " |", "|" + "---|" * text + "---:|" * numeric]


def render_comparison(comparison: Comparison, charts: ChartFiles | None = None) -> str:
    """``comparison.md``: the paper-shaped tables, then generation, selection and trust,
    then the charts (``charts``: links to the images, or their numbers as tables)."""
    rows = comparison.rows
    lines = [
        "# Methods side by side (BIRD-CRITIC)",
        "",
        f"{comparison.tasks} tasks scored by every run. Accuracy in percent.",
        "",
        *_table_head(["run", "method", "LLM", "tasks scored", "directory"], 0),
    ]
    lines += [f"| {r.name} | {r.method} | {r.llm} | {r.scored} | `{r.directory}` |" for r in rows]
    if comparison.tasks == 0:
        lines += [
            "",
            "No task was scored by every run, so there is nothing to set side by side. Compare "
            "runs over the same tasks; the parts of one measurement (different offsets) are "
            "joined first with `scripts/keep_run.py PART_A PART_B --join NAME --to DIR`.",
        ]
        return "\n".join(lines) + "\n"
    lines += _accuracy_tables(rows)
    lines += _cost_table(rows)
    lines += _trust_table(rows)
    if comparison.baseline:
        lines += [
            "",
            f"correct→broken and broken→correct are counted against `{comparison.baseline}`.",
        ]
    lines += _machines_note(rows)
    lines += chart_section(charts) if charts is not None else []
    return "\n".join(lines) + "\n"


def _accuracy_tables(rows: list[ComparisonRow]) -> list[str]:
    """Tables 1 and 2: accuracy by dialect (with the flips against the baseline), by category."""
    dialects = sorted({d for r in rows for d in r.by_dialect})
    categories = sorted({c for r in rows for c in r.by_category})
    lines = [
        "",
        "### Table 1: accuracy by dialect",
        "",
        *_table_head(
            ["method", "LLM", *dialects, "overall", "correct→broken", "broken→correct"],
            len(dialects) + 3,
        ),
    ]
    for r in rows:
        cells = [_pct(r.by_dialect.get(d)) for d in dialects]
        c2b = "–" if r.correct_to_broken is None else str(r.correct_to_broken)
        b2c = "–" if r.broken_to_correct is None else str(r.broken_to_correct)
        lines.append(
            f"| {r.name} | {r.llm} | "
            + " | ".join(cells)
            + f" | {_pct(r.overall)} | {c2b} | {b2c} |"
        )
    lines += [
        "",
        "### Table 2: accuracy by category (methods and ablations)",
        "",
        *_table_head(["method", *categories, "overall"], len(categories) + 1),
    ]
    for r in rows:
        cells = [_pct(r.by_category.get(c)) for c in categories]
        lines.append(f"| {r.name} | " + " | ".join(cells) + f" | {_pct(r.overall)} |")
    return lines


def _cost_table(rows: list[ComparisonRow]) -> list[str]:
    """Table 3: LLM calls, tokens and seconds per task (mean / median / p95), accepted."""
    lines = [
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
        lines.append(f"| {r.name} | " + " | ".join(spread) + f" | {u.accepted}/{u.tasks} |")
    return lines


def _trust_table(rows: list[ComparisonRow]) -> list[str]:
    """Table 4: generation (any candidate passes), selection (the final one) and trust."""
    lines = [
        "",
        "### Table 4: generation, selection and trust",
        "",
        "| method | final passes | any candidate passes | passing candidate not selected "
        "| wrong acceptances | distinct candidates per task | duplicates per task "
        "| candidates executing | tasks with candidates |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        t = r.trust
        final = (
            "-"
            if t.final_passed is None
            else f"{t.final_passed}/{t.covered} ({100.0 * t.final_passed / t.covered:.1f} %)"
        )
        lines.append(
            f"| {r.name} | {final} | {_share(t.any_pass, t.covered, t.any_pass_share)} "
            f"| {_num(t.not_selected)} | {t.wrong_acceptances}/{t.accepted} "
            f"| {_num(t.candidates_per_task)} | {_num(t.duplicates_per_task)} "
            f"| {_num(t.execution_share, ' %')} "
            f"| {t.covered if t.any_pass is not None else '-'}/{r.overall.tasks} |"
        )
    lines += [
        "",
        "Wrong acceptances: tasks the method marked accepted that did not pass (of the accepted "
        "ones). The candidate columns come from each run's `candidates.jsonl` "
        '(`acts-sql bench candidates`; "-": the run has none): every distinct candidate SQL of '
        "a task (duplicates: the same SQL after normalisation) scored with the evaluator. "
        '"any candidate passes": the right SQL was generated; "final passes": it was also '
        'selected; "candidates executing": distinct candidates that ran without error, '
        "pooled over the tasks.",
    ]
    return lines


def _machines_note(rows: list[ComparisonRow]) -> list[str]:
    """A warning when the seconds come from more than one machine (an unknown one counts)."""
    machines = sorted({m for r in rows for m in r.machines})
    if len(machines) <= 1:
        return []
    per_run = "; ".join(
        f"{r.name}: " + ", ".join(f"{m} ({n})" for m, n in sorted(r.machines.items())) for r in rows
    )
    unknown = f"; `{UNKNOWN}`: recorded before the machine was kept" if UNKNOWN in machines else ""
    return [
        "",
        f"**The seconds come from {len(machines)} machine(s)** (tasks per machine: {per_run}"
        f"{unknown}). Compare seconds only between tasks run on the same machine.",
    ]


def write_comparison(directory: Path, comparison: Comparison) -> ChartFiles:
    """``comparison.json``, the charts (`bench.charts`) and ``comparison.md`` linking them.

    Returns what the charts step wrote; its ``hint`` is set when matplotlib is missing.
    """
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "comparison.json").write_text(comparison.model_dump_json(indent=1) + "\n")
    charts = write_charts(directory, chart_data(comparison))
    (directory / "comparison.md").write_text(render_comparison(comparison, charts))
    return charts
