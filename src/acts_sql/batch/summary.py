"""``summary.json`` and ``summary.md`` of a batch: acceptance, cost per task, throughput.

Over every task with a record in ``results.jsonl`` (earlier runs into the same
``--out`` included): how many ran to a result, how many were accepted, how
many have an error; LLM calls, tokens and seconds per task (mean, median,
p95, over the tasks that ran); and, for this run alone, its wall time and
throughput in tasks per hour.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from acts_sql.batch.request import BatchRequest
from acts_sql.batch.worker import BatchRecord
from acts_sql.bench.report import MethodUsage, Spread, usage_lines

SUMMARY_JSON = "summary.json"
SUMMARY_MD = "summary.md"


class BatchSummary(BaseModel):
    input: str
    out: str
    method: str
    llm: str
    executor: str
    workers: int
    tasks: int
    """Tasks with a record (finished or with an error)."""
    finished: int
    accepted: int
    accepted_share: float | None
    """Accepted / finished (None: nothing finished)."""
    errors: int
    bad_lines: int
    usage: MethodUsage
    ran: int
    """Tasks run by this run (not skipped as finished before)."""
    wall_seconds: float
    tasks_per_hour: float | None
    """This run's throughput: ran / wall time."""


def summarize(
    records: list[BatchRecord],
    *,
    bad_lines: int,
    ran: int,
    wall_seconds: float,
    request: BatchRequest,
    executor: str,
) -> BatchSummary:
    finished = [r for r in records if r.finished]
    accepted = sum(1 for r in finished if r.accepted)
    usage = MethodUsage(
        tasks=len(finished),
        accepted=accepted,
        llm_calls=Spread.of([float(r.usage.llm_calls) for r in finished]),
        tokens=Spread.of(
            [float(r.usage.prompt_tokens + r.usage.completion_tokens) for r in finished]
        ),
        seconds=Spread.of([r.usage.seconds for r in finished]),
    )
    settings = request.settings
    return BatchSummary(
        input=str(request.input),
        out=str(request.out),
        method=settings.options.method.value,
        llm=settings.llm or "(default)",
        executor=executor,
        workers=request.workers,
        tasks=len(records),
        finished=len(finished),
        accepted=accepted,
        accepted_share=round(accepted / len(finished), 4) if finished else None,
        errors=len(records) - len(finished),
        bad_lines=bad_lines,
        usage=usage,
        ran=ran,
        wall_seconds=round(wall_seconds, 3),
        tasks_per_hour=round(ran * 3600 / wall_seconds, 1) if ran and wall_seconds > 0 else None,
    )


def render_markdown(summary: BatchSummary) -> str:
    share = "–" if summary.accepted_share is None else f"{100 * summary.accepted_share:.1f} %"
    rate = "–" if summary.tasks_per_hour is None else f"{summary.tasks_per_hour:g}"
    lines: list[Any] = [
        f"# Batch: {summary.method} with {summary.llm}",
        "",
        f"Input `{summary.input}`, {summary.executor} executor, {summary.workers} worker(s).",
        "",
        "| | |",
        "|---|---:|",
        f"| tasks with a record | {summary.tasks} |",
        f"| finished | {summary.finished} |",
        f"| accepted | {summary.accepted} ({share}) |",
        f"| errors (run again on resume) | {summary.errors} |",
        f"| bad input lines (errors.jsonl) | {summary.bad_lines} |",
        f"| run now | {summary.ran} in {summary.wall_seconds:g} s |",
        f"| tasks per hour (this run) | {rate} |",
        "",
        *usage_lines(summary.usage),
    ]
    return "\n".join(lines)


def write_summary(out: Path, summary: BatchSummary) -> None:
    (out / SUMMARY_JSON).write_text(
        json.dumps(summary.model_dump(mode="json"), indent=1) + "\n", encoding="utf-8"
    )
    (out / SUMMARY_MD).write_text(render_markdown(summary), encoding="utf-8")


__all__ = ["SUMMARY_JSON", "SUMMARY_MD", "BatchSummary", "render_markdown", "summarize"]
