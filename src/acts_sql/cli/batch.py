"""`acts-sql batch`: correct every task of a JSONL file (docs/SCALE.md).

Progress on stderr: a bar with tasks done, acceptance so far and throughput;
each bad input line as ``line N: why`` above it; a summary line at the end.
Exit codes: 0 every task finished and every line was a task; 1 some tasks
have an error or some lines were bad (both are in ``--out``); 2 bad input or
configuration, or an LLM backend that cannot be used (one-line reason); 130
interrupted (the finished tasks are kept; the same command goes on).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from acts_sql.batch.runner import BatchRequest, run_batch
from acts_sql.batch.summary import SUMMARY_MD, BatchSummary
from acts_sql.batch.tasks import BadLine, BatchJob
from acts_sql.batch.worker import BatchRecord, BatchSettings
from acts_sql.cli.bench import command_errors
from acts_sql.cli.console import make_console, one_line
from acts_sql.cli.inputs import writable_dir
from acts_sql.cli.options import (
    AllowWrites,
    ApiKey,
    BaseUrl,
    Candidates,
    Llm,
    LlmTimeout,
    MaxDepth,
    MaxLlmCalls,
    MaxNodes,
    MaxRows,
    MaxSeconds,
    NoAmbiguity,
    NoEvidenceGate,
    NoExecutionTools,
    NoScaledBudget,
    NoSchemaConstraint,
    Parallel,
    Temperature,
    Timeout,
    correction_options,
)
from acts_sql.engine.budget import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_LLM_CALLS,
    DEFAULT_MAX_NODES,
    DEFAULT_MAX_SECONDS,
)
from acts_sql.engine.options import DEFAULT_TEMPERATURE, Method
from acts_sql.scale import ExecutorKind

EXIT_COMPLETE, EXIT_INCOMPLETE = 0, 1

ExecutorOpt = Annotated[
    ExecutorKind,
    typer.Option(help="local: a pool of processes on this machine; ray: Ray actors"),
]
WorkersOpt = Annotated[
    int, typer.Option(min=1, max=256, help="workers (processes or Ray actors), each one backend")
]
RayAddressOpt = Annotated[
    str | None,
    typer.Option(
        help="--executor ray: the cluster (auto, ray://head:10001); "
        "empty: a local Ray cluster for this run"
    ),
]


class BatchProgress:
    """The progress bar of a batch: done/total, acceptance so far, tasks per hour."""

    def __init__(self, progress: Progress, console: Console) -> None:
        self.progress = progress
        self.console = console
        self.task_id = progress.add_task("batch", total=None, score="", rate="")
        self._lock = threading.Lock()
        self._started = time.perf_counter()
        self.ran = self.accepted = self.finished = self.errors = 0

    def started(self, total: int) -> None:
        self.progress.update(self.task_id, total=total)

    def skipped(self, job: BatchJob) -> None:
        self.progress.advance(self.task_id)

    def bad_line(self, bad: BadLine) -> None:
        self.console.print(one_line(f"line {bad.line}: {bad.error}"), soft_wrap=True)
        self.progress.advance(self.task_id)

    def result(self, record: BatchRecord) -> None:
        with self._lock:
            self.ran += 1
            self.finished += record.finished
            self.accepted += record.finished and record.accepted
            self.errors += not record.finished
            share = f"{100 * self.accepted / self.finished:.0f}%" if self.finished else "–"
            hours = (time.perf_counter() - self._started) / 3600
            score = f"accepted {self.accepted}/{self.finished} ({share})"
            if self.errors:
                score += f", {self.errors} error(s)"
        if not record.finished:
            self.console.print(one_line(f"{record.id}: {record.error}"), soft_wrap=True)
        self.progress.update(
            self.task_id, advance=1, score=score, rate=f"{self.ran / hours:,.0f} tasks/h"
        )


def summary_line(summary: BatchSummary, out: Path) -> str:
    share = "–" if summary.accepted_share is None else f"{100 * summary.accepted_share:.1f} %"
    rate = "" if summary.tasks_per_hour is None else f"; {summary.tasks_per_hour:,.0f} tasks/h"
    return (
        f"{summary.tasks} tasks: {summary.accepted} accepted of {summary.finished} finished "
        f"({share}), {summary.errors} with an error, {summary.bad_lines} bad line(s); "
        f"{summary.ran} run now in {summary.wall_seconds:.1f} s{rate} -> {out}/{SUMMARY_MD}"
    )


TasksIn = Annotated[
    Path,
    typer.Option("--in", help="tasks JSONL: one {id, database, question, sql?, dialect?} per line"),
]
OutOpt = Annotated[Path, typer.Option(help="output directory (resumable)")]
DatabasesOpt = Annotated[
    Path | None, typer.Option(help='TOML file of database names: [databases] name = "URL"')
]
SharedCache = Annotated[
    Path | None, typer.Option(help="record/replay cache directory, shared by the workers")
]
ScriptedDelay = Annotated[
    float,
    typer.Option(
        min=0.0,
        help="scripted:PATH only: seconds each LLM call sleeps (an endpoint's latency, "
        "to measure throughput)",
    ),
]
MethodOpt = Annotated[Method, typer.Option(help="the correction method, as in `fix`")]


def batch(
    ctx: typer.Context,
    tasks: TasksIn,
    out: OutOpt,
    databases: DatabasesOpt = None,
    executor: ExecutorOpt = ExecutorKind.LOCAL,
    workers: WorkersOpt = 1,
    ray_address: RayAddressOpt = None,
    llm: Llm = None,
    llm_cache: SharedCache = None,
    scripted_delay: ScriptedDelay = 0.0,
    base_url: BaseUrl = None,
    api_key: ApiKey = None,
    llm_timeout: LlmTimeout = None,
    method: MethodOpt = Method.ACTS,
    no_execution_tools: NoExecutionTools = False,
    no_ambiguity: NoAmbiguity = False,
    no_evidence_gate: NoEvidenceGate = False,
    no_scaled_budget: NoScaledBudget = False,
    no_schema_constraint: NoSchemaConstraint = False,
    max_llm_calls: MaxLlmCalls = DEFAULT_MAX_LLM_CALLS,
    max_nodes: MaxNodes = DEFAULT_MAX_NODES,
    max_depth: MaxDepth = DEFAULT_MAX_DEPTH,
    max_seconds: MaxSeconds = DEFAULT_MAX_SECONDS,
    candidates: Candidates = None,
    temperature: Temperature = DEFAULT_TEMPERATURE,
    parallel: Parallel = None,
    timeout: Timeout = None,
    max_rows: MaxRows = None,
    allow_writes: AllowWrites = False,
) -> None:
    """Correct every task of a JSONL file; on this machine or a Ray cluster.

    Writes results.jsonl (per task: id, sql, accepted, stop reason, usage, error),
    traces/, errors.jsonl (bad input lines), summary.json and summary.md.
    Re-running into the same --out skips the finished tasks.
    """
    console = make_console(stderr=True)
    with command_errors(
        out, lambda: f"batch; the finished tasks are kept in {out}, the same command goes on"
    ):
        writable_dir(out, "--out")
        writable_dir(llm_cache, "--llm-cache")
        settings = batch_settings(ctx.params)
        settings.backend()  # a bad --llm is bad input before any worker starts
        request = BatchRequest(
            input=tasks,
            out=out,
            databases=databases,
            settings=settings,
            executor=executor,
            workers=workers,
            ray_address=ray_address,
        )
        summary = _run(request, console)
    console.print(summary_line(summary, out), soft_wrap=True)
    complete = summary.errors == 0 and summary.bad_lines == 0
    raise typer.Exit(EXIT_COMPLETE if complete else EXIT_INCOMPLETE)


def batch_settings(flags: dict[str, Any]) -> BatchSettings:
    """What every worker is built from, from the flags of `batch` (by parameter name)."""
    given = ("llm", "base_url", "api_key", "llm_cache", "timeout", "max_rows", "allow_writes")
    return BatchSettings(
        **{name: flags[name] for name in given},
        llm_timeout=flags["llm_timeout"],
        scripted_delay_s=flags["scripted_delay"],
        options=correction_options(flags),
    )


def _run(request: BatchRequest, console: Console) -> BatchSummary:
    columns = (
        TextColumn("{task.description}", style="bold", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[score]}", markup=False),
        TextColumn("{task.fields[rate]}", markup=False),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=False) as progress:
        return run_batch(request, listener=BatchProgress(progress, console))


def register(app: typer.Typer) -> None:
    """Add `batch` to the main command."""
    app.command(name="batch")(batch)


__all__ = ["batch", "register"]
