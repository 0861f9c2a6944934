"""`acts-sql bench everyday`: correct the everyday-errors cases with each method, score them.

Runs each `--method` over the cases of `acts_sql.bench.everyday` (SQLite,
DuckDB and PostgreSQL; the databases are built from the fixtures and removed
afterwards) and writes ``records-<method>.jsonl``, ``report.json`` and
``report.md``. Exit codes: 0 done; 2 bad input or configuration; 130 interrupted.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from acts_sql.bench.everyday.cases import DIALECTS
from acts_sql.bench.everyday.report import build_report, write_report
from acts_sql.bench.everyday.runner import (
    EverydayBenchRequest,
    EverydayRecord,
    run_everyday_bench,
)
from acts_sql.cli.bench import BenchCandidates, BenchTemperature, command_errors
from acts_sql.cli.bench_logs import IdsOpt, LimitOpt, MethodsOpt
from acts_sql.cli.console import make_console
from acts_sql.cli.inputs import writable_dir
from acts_sql.cli.options import (
    ApiKey,
    BaseUrl,
    Llm,
    LlmTimeout,
    MaxLlmCalls,
    MaxSeconds,
    NoEvidenceGate,
    NoScaledBudget,
    NoSchemaConstraint,
    correction_options,
    llm_overrides,
)
from acts_sql.engine.budget import DEFAULT_MAX_LLM_CALLS, DEFAULT_MAX_SECONDS
from acts_sql.llm.spec import parse_llm_spec

DEFAULT_OUT = Path("runs/bench-everyday")
PG_ENV = "ACTS_SQL_TEST_PG_URL"
OutOpt = Annotated[Path, typer.Option(help="output directory (records, report)")]
DialectOpt = Annotated[
    list[str] | None,
    typer.Option("--dialect", help="only these dialects, repeatable: " + " | ".join(DIALECTS)),
]
PgUrlOpt = Annotated[
    str | None,
    typer.Option(
        help=f"PostgreSQL server for the PostgreSQL cases, a user that may create databases "
        f"(default: ${PG_ENV})",
        show_default=False,
    ),
]


def bench_everyday(
    ctx: typer.Context,
    method: MethodsOpt,
    out: OutOpt = DEFAULT_OUT,
    llm: Llm = None,
    base_url: BaseUrl = None,
    api_key: ApiKey = None,
    llm_timeout: LlmTimeout = None,
    dialect: DialectOpt = None,
    ids: IdsOpt = None,
    limit: LimitOpt = None,
    pg_url: PgUrlOpt = None,
    max_llm_calls: MaxLlmCalls = DEFAULT_MAX_LLM_CALLS,
    max_seconds: MaxSeconds = DEFAULT_MAX_SECONDS,
    candidates: BenchCandidates = None,
    temperature: BenchTemperature = None,
    no_evidence_gate: NoEvidenceGate = False,
    no_scaled_budget: NoScaledBudget = False,
    no_schema_constraint: NoSchemaConstraint = False,
) -> None:
    """Correct 38 everyday SQL mistakes (SQLite, DuckDB, PostgreSQL) with each method.

    Scores every answer by its rows against our gold SQL and writes OUT/report.md: right,
    accepted, wrong acceptances, LLM calls and seconds per case, by error class and
    dialect; each case's trace goes to OUT/traces/<method>/<id>.json.gz. Re-running into
    the same --out skips the cases already done.
    """
    console = make_console(stderr=True)
    with command_errors(
        out,
        lambda: (
            f"bench everyday; the finished cases are kept in {out}/records-*.jsonl and the "
            "same command goes on from there"
        ),
    ):
        writable_dir(out, "--out")
        backend = parse_llm_spec(llm, **llm_overrides(ctx.params))
        request = EverydayBenchRequest(
            out=out,
            methods=list(dict.fromkeys(method)),
            llm=llm,
            ids=[i.strip() for i in (ids or "").split(",") if i.strip()],
            dialects=list(dict.fromkeys(dialect or [])),
            limit=limit,
            pg_url=pg_url or os.environ.get(PG_ENV) or None,
            options=correction_options({**ctx.params, "method": None}),
        )
        records = run_everyday_bench(request, backend=backend, on_record=progress_printer(console))
        report = build_report(records, llm=llm)
        write_report(out, report)
    for row in report.rows:
        console.print(
            f"{row.method}: {row.accuracy:.1f}% right ({row.right}/{row.cases}), "
            f"{row.wrong_accepted} wrong acceptances, {row.llm_calls.mean:.2f} calls and "
            f"{row.seconds.mean:.2f} s a case",
            markup=False,
        )
    console.print(f"-> {out}/report.md", markup=False)


def progress_printer(console: Console) -> Callable[[EverydayRecord], None]:
    """One line per finished case: its method, verdict, calls and time."""
    done: list[EverydayRecord] = []

    def progress(record: EverydayRecord) -> None:
        done.append(record)
        verdict = "right" if record.right else (record.error or "wrong")
        accepted = ", accepted" if record.accepted else ""
        console.print(
            f"[{len(done)}] {record.method} {record.id} ({record.dialect}, "
            f"{record.error_class}): {verdict}{accepted} ({record.llm_calls} calls, "
            f"{record.seconds:.1f} s)",
            soft_wrap=True,
            markup=False,
        )

    return progress


def register(bench_app: typer.Typer) -> None:
    bench_app.command("everyday")(bench_everyday)
