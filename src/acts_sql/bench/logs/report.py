"""The `bench logs` report, shaped like the paper's Table 3: accuracy and latency per strategy.

One row for the generated queries as they are ("generation only": the
text-to-query step alone), then one row per correction method: accuracy
(share of tasks whose final query returns the gold result), its change
against generation only, what correction fixed and broke, and latency
(seconds per task, generation included) with LLM calls and tokens. A second
table gives the accuracy per category of task.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from pydantic import BaseModel

from acts_sql.bench.logs.runner import LogRecord

CATEGORIES = ("filter", "time_bucket", "top_k", "percentile", "join", "window", "ambiguous")


class StrategyRow(BaseModel):
    strategy: str
    tasks: int
    passed: int
    accuracy: float
    """Percent of the tasks."""
    delta: float | None = None
    """Accuracy minus generation only's, in points (None for generation only itself)."""
    fixed: int = 0
    """Generated query wrong, final right."""
    broken: int = 0
    """Generated query right, final wrong."""
    accepted: int = 0
    from_sql: int = 0
    """Tasks whose query (generation only: the generated one; a method: its final one) is the
    PRQL rewrite of SQL the model wrote (docs/LANGUAGES.md)."""
    mean_seconds: float = 0.0
    p50_seconds: float = 0.0
    p90_seconds: float = 0.0
    llm_calls: float = 0.0
    """Per task."""
    tokens: float = 0.0
    """Prompt plus completion tokens per task."""
    errors: int = 0
    by_category: dict[str, float] = {}


class LogsReport(BaseModel):
    llm: str | None
    database: str
    rows: list[StrategyRow]


def _quantile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _by_category(records: list[LogRecord], passed: list[bool]) -> dict[str, float]:
    found = {}
    for category in CATEGORIES:
        picks = [p for r, p in zip(records, passed, strict=True) if r.category == category]
        if picks:
            found[category] = round(100 * sum(picks) / len(picks), 1)
    return found


def _row(
    name: str, records: list[LogRecord], passed: list[bool], seconds: list[float]
) -> StrategyRow:
    n = len(records)
    return StrategyRow(
        strategy=name,
        tasks=n,
        passed=sum(passed),
        accuracy=round(100 * sum(passed) / n, 1) if n else 0.0,
        mean_seconds=round(statistics.fmean(seconds), 2) if seconds else 0.0,
        p50_seconds=round(_quantile(seconds, 0.5), 2),
        p90_seconds=round(_quantile(seconds, 0.9), 2),
        errors=sum(1 for r in records if r.error),
        by_category=_by_category(records, passed),
    )


def build_report(
    records: dict[str, list[LogRecord]], *, llm: str | None, database: str
) -> LogsReport:
    """Generation only (from the first method's generated queries), then each method."""
    rows: list[StrategyRow] = []
    first = next((rs for rs in records.values() if rs), [])
    if first:
        generation = _row(
            "generation only", first, [r.initial_passed for r in first],
            [r.generation_seconds for r in first],
        )  # fmt: skip
        generation.from_sql = sum(1 for r in first if r.initial_from_sql)
        rows.append(generation)
    for method, method_records in records.items():
        if not method_records:
            continue
        row = _row(method, method_records, [r.passed for r in method_records],
                   [r.seconds for r in method_records])  # fmt: skip
        n = len(method_records)
        base = 100 * sum(r.initial_passed for r in method_records) / n
        row.delta = round(row.accuracy - base, 1)
        row.fixed = sum(1 for r in method_records if r.passed and not r.initial_passed)
        row.broken = sum(1 for r in method_records if r.initial_passed and not r.passed)
        row.accepted = sum(1 for r in method_records if r.accepted)
        row.from_sql = sum(1 for r in method_records if r.final_from_sql)
        row.llm_calls = round(sum(r.llm_calls for r in method_records) / n, 2)
        row.tokens = round(
            sum(r.prompt_tokens + r.completion_tokens for r in method_records) / n, 1
        )
        rows.append(row)
    return LogsReport(llm=llm, database=database, rows=rows)


def render_markdown(report: LogsReport) -> str:
    lines = [
        "# bench logs: text-to-query (PRQL) on the log database",
        "",
        f"LLM: `{report.llm or 'default'}`; database: `{report.database}`. Accuracy: the final "
        "query returns the gold result. Latency: seconds per task, generation included "
        "(generation only: until the generated query was there). Generation only scores the "
        "generated queries of the first method's runs (with greedy decoding every method "
        "generates the same ones). From SQL: tasks whose query is the PRQL rewrite of SQL the "
        "model wrote instead of PRQL.",
        "",
        "| strategy | accuracy | Δ vs generation | fixed | broken | accepted | from SQL "
        "| latency mean (s) | p50 (s) | p90 (s) | LLM calls/task | tokens/task |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in report.rows:
        delta = "–" if row.delta is None else f"{row.delta:+.1f}"
        lines.append(
            f"| {row.strategy} | {row.accuracy:.1f}% ({row.passed}/{row.tasks}) | {delta} "
            f"| {row.fixed} | {row.broken} | {row.accepted} | {row.from_sql} "
            f"| {row.mean_seconds:.2f} "
            f"| {row.p50_seconds:.2f} | {row.p90_seconds:.2f} | {row.llm_calls:.2f} "
            f"| {row.tokens:.0f} |"
        )
    lines += ["", "Accuracy by category (%):", ""]
    lines.append("| strategy | " + " | ".join(CATEGORIES) + " |")
    lines.append("|---|" + "---|" * len(CATEGORIES))
    for row in report.rows:
        cells = [f"{row.by_category[c]:.1f}" if c in row.by_category else "–" for c in CATEGORIES]
        lines.append(f"| {row.strategy} | " + " | ".join(cells) + " |")
    errors = [f"{row.strategy}: {row.errors}" for row in report.rows if row.errors]
    if errors:
        lines += ["", "Runs that raised: " + ", ".join(errors) + " (see records-<method>.jsonl)."]
    return "\n".join(lines) + "\n"


def write_report(out: Path, report: LogsReport) -> None:
    (out / "report.json").write_text(report.model_dump_json(indent=1) + "\n", encoding="utf-8")
    (out / "report.md").write_text(render_markdown(report), encoding="utf-8")


def load_report(out: Path) -> LogsReport:
    return LogsReport.model_validate(json.loads((out / "report.json").read_text("utf-8")))
