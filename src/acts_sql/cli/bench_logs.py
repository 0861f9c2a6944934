"""`acts-sql bench logs` and `acts-sql bench logs-db`: the text-to-query benchmark on logs.

`bench logs` runs text-to-query in PRQL (generate, then correct) with each
`--method` over the 60 log tasks and writes ``records-<method>.jsonl``,
``report.json`` and ``report.md`` (the paper's Table 3 shape). `bench logs-db`
only writes the generated database (for `acts-sql fix --language prql`).
Exit codes: 0 done; 2 bad input or configuration; 130 interrupted.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from acts_sql.bench.logs.generator import DEFAULT_SEED, LogSize, generate
from acts_sql.bench.logs.report import build_report, write_report
from acts_sql.bench.logs.runner import LogRecord, LogsBenchRequest, run_logs_bench
from acts_sql.cli.bench import BenchCandidates, BenchTemperature, command_errors
from acts_sql.cli.console import fail, make_console
from acts_sql.cli.inputs import writable_dir
from acts_sql.cli.options import (
    ApiKey,
    BaseUrl,
    Llm,
    LlmTimeout,
    MaxLlmCalls,
    MaxSeconds,
    correction_options,
    llm_overrides,
)
from acts_sql.engine.budget import DEFAULT_MAX_LLM_CALLS, DEFAULT_MAX_SECONDS
from acts_sql.engine.options import Method
from acts_sql.llm.spec import parse_llm_spec

DEFAULT_OUT = Path("runs/bench-logs")
SizeOpt = Annotated[
    LogSize,
    typer.Option(help="small: 20,000 requests (seconds to build); full: 1,000,000 (minutes)"),
]
SeedOpt = Annotated[int, typer.Option(help="generator seed: the same seed, the same rows")]


MethodsOpt = Annotated[
    list[Method],
    typer.Option(
        "--method", help="correction method, repeatable: " + " | ".join(m.value for m in Method)
    ),
]
OutOpt = Annotated[Path, typer.Option(help="output directory (records, report, the database)")]
DbOpt = Annotated[
    Path | None,
    typer.Option(help="an existing log database (default: OUT/logs-SIZE-SEED.duckdb, built)"),
]
IdsOpt = Annotated[str | None, typer.Option(help="comma-separated task ids: L01,L17")]
LimitOpt = Annotated[int | None, typer.Option(min=0, help="at most N tasks")]


def bench_logs(
    ctx: typer.Context,
    method: MethodsOpt,
    out: OutOpt = DEFAULT_OUT,
    llm: Llm = None,
    base_url: BaseUrl = None,
    api_key: ApiKey = None,
    llm_timeout: LlmTimeout = None,
    size: SizeOpt = LogSize.SMALL,
    seed: SeedOpt = DEFAULT_SEED,
    db: DbOpt = None,
    ids: IdsOpt = None,
    limit: LimitOpt = None,
    max_llm_calls: MaxLlmCalls = DEFAULT_MAX_LLM_CALLS,
    max_seconds: MaxSeconds = DEFAULT_MAX_SECONDS,
    candidates: BenchCandidates = None,
    temperature: BenchTemperature = None,
) -> None:
    """Text-to-query in PRQL on the generated log database: generate, then correct, per method.

    Scores the generated and the final query of every task by their result against the
    gold result, and writes OUT/report.md (accuracy and latency per strategy, the paper's
    Table 3 shape). Re-running into the same --out skips the tasks already done.
    """
    console = make_console(stderr=True)
    with command_errors(
        out,
        lambda: (
            f"bench logs; the finished tasks are kept in {out}/records-*.jsonl and the "
            "same command goes on from there"
        ),
    ):
        writable_dir(out, "--out")
        backend = parse_llm_spec(llm, **llm_overrides(ctx.params))
        request = LogsBenchRequest(
            out=out,
            methods=list(dict.fromkeys(method)),
            llm=llm,
            size=size,
            seed=seed,
            db=db,
            ids=[i.strip() for i in (ids or "").split(",") if i.strip()],
            limit=limit,
            options=correction_options({**ctx.params, "method": None}),
        )
        records = run_logs_bench(request, backend=backend, on_record=progress_printer(console))
        report = build_report(records, llm=llm, database=str(request.database_path()))
        write_report(out, report)
    for row in report.rows:
        console.print(
            f"{row.strategy}: {row.accuracy:.1f}% ({row.passed}/{row.tasks}), "
            f"{row.mean_seconds:.2f} s/task",
            markup=False,
        )
    console.print(f"-> {out}/report.md", markup=False)


def progress_printer(console: Console) -> Callable[[LogRecord], None]:
    """One line per finished task: its method, verdict and time."""
    done: list[LogRecord] = []

    def progress(record: LogRecord) -> None:
        done.append(record)
        verdict = "passed" if record.passed else (record.error or "failed")
        console.print(
            f"[{len(done)}] {record.method} {record.id}: {verdict} "
            f"(generated: {'passed' if record.initial_passed else 'failed'}, "
            f"{record.seconds:.1f} s)",
            soft_wrap=True,
            markup=False,
        )

    return progress


def bench_logs_db(
    path: Annotated[Path, typer.Argument(help="DuckDB file to write (replaced if it exists)")],
    size: SizeOpt = LogSize.SMALL,
    seed: SeedOpt = DEFAULT_SEED,
) -> None:
    """Write the generated log database (services, deployments, requests, errors)."""
    console = make_console(stderr=True)
    try:
        database = generate(path, size, seed)
    except OSError as exc:
        raise fail(f"cannot write {path}: {exc.strerror or exc}") from None
    counts = ", ".join(f"{n:,} {table}" for table, n in database.rows.items())
    console.print(f"{path}: {counts}; checksum {database.checksum}", markup=False)


def register(bench_app: typer.Typer) -> None:
    bench_app.command("logs")(bench_logs)
    bench_app.command("logs-db")(bench_logs_db)
