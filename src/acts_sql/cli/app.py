"""`acts-sql`: the command line.

Exit codes: 0 a candidate was accepted; 1 none was (the best candidate is
still printed); 2 bad input or configuration, with a one-line reason.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from acts_sql.api import correct
from acts_sql.cli.bench import register as register_bench
from acts_sql.cli.demo import run_demo
from acts_sql.cli.options import (
    Candidates,
    MaxDepth,
    MaxLlmCalls,
    MaxNodes,
    MaxSeconds,
    NoAmbiguity,
    NoExecutionTools,
    Temperature,
)
from acts_sql.cli.render import progress_printer, show_result
from acts_sql.cli.serve import serve
from acts_sql.engine.budget import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_LLM_CALLS,
    DEFAULT_MAX_NODES,
    DEFAULT_MAX_SECONDS,
)
from acts_sql.engine.options import DEFAULT_TEMPERATURE
from acts_sql.engine.result import CorrectionResult
from acts_sql.engine.trace import TraceEvent
from acts_sql.errors import ActsSqlError
from acts_sql.llm.cache import CachedBackend
from acts_sql.llm.spec import parse_llm_spec
from acts_sql.protocol import PROTOCOL_MODELS
from acts_sql.viewer import render_html

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="acts-sql corrects SQL: plan-guided, tree-structured, execution-grounded.",
    pretty_exceptions_enable=False,
)
register_bench(app)
app.command(name="serve")(serve)
EXIT_ACCEPTED, EXIT_NOT_ACCEPTED, EXIT_BAD_INPUT = 0, 1, 2


def fail(message: str) -> typer.Exit:
    Console(stderr=True).print(
        f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True
    )
    return typer.Exit(EXIT_BAD_INPUT)


def write_trace(path: Path, events: list[TraceEvent]) -> None:
    path.write_text(
        json.dumps([e.model_dump(mode="json") for e in events], indent=1, ensure_ascii=False) + "\n"
    )


def emit_result(
    result: CorrectionResult, *, as_json: bool, trace: Path | None, console: Console
) -> None:
    if trace is not None:
        write_trace(trace, result.trace)
    if as_json:
        sys.stdout.write(result.model_dump_json(indent=1) + "\n")
    else:
        show_result(console, result)


@app.command()
def fix(
    db: Annotated[str, typer.Option(help="database URL (sqlite:///path.db) or file path")],
    question: Annotated[
        str, typer.Option(help="what the user wants: the issue or the question")
    ] = "",
    sql: Annotated[str, typer.Option(help="the SQL to correct; omit for text-to-SQL mode")] = "",
    dialect: Annotated[
        str | None, typer.Option(help="SQL dialect; default: the database's")
    ] = None,
    llm: Annotated[
        str | None,
        typer.Option(
            help="LLM SPEC: openai:MODEL, local:NAME, local:PATH.gguf, scripted:PATH "
            "(default: an endpoint from OPENAI_BASE_URL/OPENAI_API_KEY, else the embedded "
            "local model)"
        ),
    ] = None,
    llm_cache: Annotated[
        Path | None,
        typer.Option(
            help="record/replay cache directory: identical LLM requests are answered from disk"
        ),
    ] = None,
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint URL")] = None,
    api_key: Annotated[str | None, typer.Option(help="API key for the endpoint")] = None,
    method: Annotated[str, typer.Option(help="acts | linear | critic | raw | vote")] = "acts",
    as_json: Annotated[
        bool, typer.Option("--json", help="print the result object as JSON")
    ] = False,
    trace: Annotated[
        Path | None, typer.Option(help="write the trace events as JSON to this file")
    ] = None,
    no_execution_tools: NoExecutionTools = False,
    no_ambiguity: NoAmbiguity = False,
    max_llm_calls: MaxLlmCalls = DEFAULT_MAX_LLM_CALLS,
    max_nodes: MaxNodes = DEFAULT_MAX_NODES,
    max_depth: MaxDepth = DEFAULT_MAX_DEPTH,
    max_seconds: MaxSeconds = DEFAULT_MAX_SECONDS,
    candidates: Candidates = None,
    temperature: Temperature = DEFAULT_TEMPERATURE,
    timeout: Annotated[
        float | None,
        typer.Option(help="seconds per statement (default 60; 15 for WITH RECURSIVE)"),
    ] = None,
    max_rows: Annotated[
        int | None, typer.Option(help="rows kept per statement (default 10,000)")
    ] = None,
    allow_writes: Annotated[
        bool,
        typer.Option(
            "--allow-writes",
            help="let statements write, on a throw-away copy of the database (never the original)",
        ),
    ] = False,
    html: Annotated[
        Path | None, typer.Option(help="write the debugging tree as a self-contained HTML page")
    ] = None,
) -> None:
    """Correct SQL so it does what the question or issue asks."""
    console = Console(stderr=as_json)
    try:
        overrides: dict[str, Any] = {
            k: v for k, v in (("base_url", base_url), ("api_key", api_key)) if v
        }
        backend = parse_llm_spec(llm, **overrides)
        if llm_cache is not None:
            backend = CachedBackend(backend, llm_cache)
        result = correct(
            db,
            question,
            sql,
            dialect=dialect,
            llm=backend,
            method=method,
            max_llm_calls=max_llm_calls,
            max_nodes=max_nodes,
            max_depth=max_depth,
            max_seconds=max_seconds,
            execution_tools=not no_execution_tools,
            ambiguity_detection=not no_ambiguity,
            candidates=candidates,
            temperature=temperature,
            timeout=timeout,
            max_rows=max_rows,
            allow_writes=allow_writes,
            on_event=None if as_json else progress_printer(console),
        )
    except ActsSqlError as exc:
        raise fail(str(exc)) from None
    try:
        emit_result(result, as_json=as_json, trace=trace, console=console)
        if html is not None:
            html.write_text(render_html(result), encoding="utf-8")
    except OSError as exc:
        raise fail(f"cannot write {exc.filename or 'the output'}: {exc.strerror or exc}") from None
    raise typer.Exit(EXIT_ACCEPTED if result.accepted else EXIT_NOT_ACCEPTED)


@app.command()
def demo(
    task: Annotated[str | None, typer.Option(help="run one example task by id")] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="print the results as JSON lines")
    ] = False,
    llm: Annotated[
        str | None,
        typer.Option(
            help="LLM SPEC (default: the embedded local model); `scripted` replays recorded "
            "agent replies without a model"
        ),
    ] = None,
    max_llm_calls: Annotated[
        int | None, typer.Option(help="budget per task: LLM calls (default 12; scripted 40)")
    ] = None,
    max_seconds: Annotated[
        float | None,
        typer.Option(help="budget per task: wall time in seconds (default 300; scripted 600)"),
    ] = None,
) -> None:
    """Correct the paper's example tasks on the bundled SQLite database."""
    try:
        code = run_demo(
            task_id=task,
            as_json=as_json,
            llm=llm,
            max_llm_calls=max_llm_calls,
            max_seconds=max_seconds,
        )
    except ActsSqlError as exc:
        raise fail(str(exc)) from None
    raise typer.Exit(code)


@app.command()
def protocol() -> None:
    """Print the JSON Schema of the plan protocol (the agent's JSON replies)."""
    sys.stdout.write(json.dumps(protocol_schema(), indent=2) + "\n")


def protocol_schema() -> dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "acts-sql plan protocol",
        "$defs": {name: model.model_json_schema() for name, model in PROTOCOL_MODELS.items()},
    }


def main() -> None:
    # sqlglot warns on stderr for every statement it keeps as raw text
    # ("contains unsupported syntax"): expected here, and noise for a user
    logging.getLogger("sqlglot").setLevel(logging.ERROR)
    app()
