"""The `bench everyday` report: per method, how many answers are right, accepted, accepted
but wrong, and what it cost; then right answers per error class and per dialect.

- right: the answer returns the gold rows (`scoring.returns_gold`);
- accepted / wrong acceptances: the engine marked the answer accepted / and it
  is not right (the number that must stay 0);
- fixed: right, where the user's SQL was not (every case's wrong SQL is wrong,
  so fixed equals right; kept for the shape of the other reports);
- broken: the user's SQL ran but the answer does not (worse than the user's
  SQL: an error where there were rows);
- by rules: right with 0 LLM calls (the deterministic repairs alone);
- LLM calls and seconds per case (mean, p50, p90); executed: the share of the
  distinct candidates the runs executed that ran.
"""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

from pydantic import BaseModel

from acts_sql.bench.everyday.cases import DIALECTS, ERROR_CLASSES
from acts_sql.bench.everyday.runner import EverydayRecord


class Spread(BaseModel):
    mean: float = 0.0
    p50: float = 0.0
    p90: float = 0.0


class Tally(BaseModel):
    cases: int = 0
    right: int = 0
    accepted: int = 0
    wrong_accepted: int = 0


class MethodRow(BaseModel):
    method: str
    cases: int
    right: int
    accuracy: float
    """Percent of the cases."""
    accepted: int
    wrong_accepted: int
    fixed: int
    broken: int
    by_rules: int
    llm_calls: Spread
    seconds: Spread
    candidates: int
    candidates_ran: int
    executed_share: float | None
    """Percent of the candidates that ran (None: no candidate recorded)."""
    errors: int
    by_class: dict[str, Tally]
    by_dialect: dict[str, Tally]


class EverydayReport(BaseModel):
    llm: str | None
    rows: list[MethodRow]


def quantile(values: list[float], q: float) -> float:
    """The nearest-rank quantile: the smallest value with at least a share `q` of `values` at
    or below it (p50 of 0 and 1 is 0); 0 when empty."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def spread(values: list[float]) -> Spread:
    if not values:
        return Spread()
    return Spread(
        mean=round(statistics.fmean(values), 3),
        p50=round(quantile(values, 0.5), 3),
        p90=round(quantile(values, 0.9), 3),
    )


def _tally(records: list[EverydayRecord]) -> Tally:
    return Tally(
        cases=len(records),
        right=sum(r.right for r in records),
        accepted=sum(r.accepted for r in records),
        wrong_accepted=sum(r.accepted and not r.right for r in records),
    )


def _grouped(records: list[EverydayRecord], field: str, keys: tuple[str, ...]) -> dict[str, Tally]:
    found = {}
    for key in keys:
        picked = [r for r in records if getattr(r, field) == key]
        if picked:
            found[key] = _tally(picked)
    return found


def method_row(method: str, records: list[EverydayRecord]) -> MethodRow:
    """The report row of one method's records."""
    total = _tally(records)
    candidates = sum(r.candidates for r in records)
    ran = sum(r.candidates_ran for r in records)
    return MethodRow(
        method=method,
        cases=total.cases,
        right=total.right,
        accuracy=round(100 * total.right / total.cases, 1) if total.cases else 0.0,
        accepted=total.accepted,
        wrong_accepted=total.wrong_accepted,
        fixed=total.right,
        broken=sum(r.wrong_ran and r.final_status != "ok" for r in records),
        by_rules=sum(r.right and r.llm_calls == 0 for r in records),
        llm_calls=spread([float(r.llm_calls) for r in records]),
        seconds=spread([r.seconds for r in records]),
        candidates=candidates,
        candidates_ran=ran,
        executed_share=round(100 * ran / candidates, 1) if candidates else None,
        errors=sum(1 for r in records if r.error),
        by_class=_grouped(records, "error_class", ERROR_CLASSES),
        by_dialect=_grouped(records, "dialect", DIALECTS),
    )


def build_report(records: dict[str, list[EverydayRecord]], *, llm: str | None) -> EverydayReport:
    rows = [method_row(m, rs) for m, rs in records.items() if rs]
    return EverydayReport(llm=llm, rows=rows)


def _cell(tally: Tally | None) -> str:
    if tally is None:
        return "–"
    wrong = f", {tally.wrong_accepted} wrong acc." if tally.wrong_accepted else ""
    return f"{tally.right}/{tally.cases}{wrong}"


def _main_table(report: EverydayReport) -> list[str]:
    lines = [
        "| method | right | accepted | wrong acceptances | fixed | broken | by rules (0 calls) "
        "| LLM calls mean / p50 / p90 | seconds mean / p50 / p90 | candidates that ran |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in report.rows:
        share = "–" if row.executed_share is None else f"{row.executed_share:.1f}%"
        calls, secs = row.llm_calls, row.seconds
        lines.append(
            f"| {row.method} | {row.accuracy:.1f}% ({row.right}/{row.cases}) | {row.accepted} "
            f"| {row.wrong_accepted} | {row.fixed} | {row.broken} | {row.by_rules} "
            f"| {calls.mean:.2f} / {calls.p50:g} / {calls.p90:g} "
            f"| {secs.mean:.2f} / {secs.p50:.2f} / {secs.p90:.2f} "
            f"| {share} ({row.candidates_ran}/{row.candidates}) |"
        )
    return lines


def _breakdown(report: EverydayReport, title: str, field: str, keys: tuple[str, ...]) -> list[str]:
    shown = [k for k in keys if any(k in getattr(row, field) for row in report.rows)]
    lines = ["", f"Right answers by {title}:", ""]
    lines.append(f"| method | {' | '.join(shown)} |")
    lines.append("|---|" + "---|" * len(shown))
    for row in report.rows:
        cells = [_cell(getattr(row, field).get(k)) for k in shown]
        lines.append(f"| {row.method} | " + " | ".join(cells) + " |")
    return lines


def render_markdown(report: EverydayReport) -> str:
    lines = [
        "# bench everyday: everyday SQL mistakes on SQLite, DuckDB and PostgreSQL",
        "",
        f"LLM: `{report.llm or 'default'}`. Right: the answer returns the gold SQL's rows. "
        "Wrong acceptances: accepted and not right. Broken: the user's SQL ran, the answer "
        "does not. By rules: right with 0 LLM calls. Candidates that ran: of the distinct "
        "candidates the runs executed.",
        "",
        *_main_table(report),
        *_breakdown(report, "error class", "by_class", ERROR_CLASSES),
        *_breakdown(report, "dialect", "by_dialect", DIALECTS),
    ]
    errors = [f"{row.method}: {row.errors}" for row in report.rows if row.errors]
    if errors:
        lines += ["", "Runs that raised: " + ", ".join(errors) + " (see records-<method>.jsonl)."]
    return "\n".join(lines) + "\n"


def write_report(out: Path, report: EverydayReport) -> None:
    (out / "report.json").write_text(report.model_dump_json(indent=1) + "\n", encoding="utf-8")
    (out / "report.md").write_text(render_markdown(report), encoding="utf-8")


def load_report(out: Path) -> EverydayReport:
    return EverydayReport.model_validate(json.loads((out / "report.json").read_text("utf-8")))
