"""`acts-sql`: the command line.

Exit codes: 0 a candidate was accepted; 1 none was (the best candidate is
still printed); 2 bad input or configuration, with a one-line reason; 130
interrupted (Ctrl-C), with a one-line note of what was.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from acts_sql import __version__
from acts_sql.api import correct
from acts_sql.cli import ask as ask_cli
from acts_sql.cli.ask import AskOpt
from acts_sql.cli.batch import register as register_batch
from acts_sql.cli.bench import bench_app
from acts_sql.cli.bench import register as register_bench
from acts_sql.cli.bench_everyday import register as register_everyday_bench
from acts_sql.cli.bench_logs import register as register_logs_bench
from acts_sql.cli.console import OneLineErrors, fail, interruptible, make_console
from acts_sql.cli.demo import run_demo, task_ids
from acts_sql.cli.doctor import register as register_doctor
from acts_sql.cli.inputs import one_stdin, text_option, writable_dir, writable_file
from acts_sql.cli.mcp_command import mcp
from acts_sql.cli.options import (
    AllowWrites,
    ApiKey,
    BaseUrl,
    Candidates,
    LlmCache,
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
    llm_overrides,
    method_flag,
)
from acts_sql.cli.render import (
    Activity,
    fan_out,
    languages_table,
    progress_printer,
    show_result,
)
from acts_sql.cli.serve import serve
from acts_sql.db.connect import open_database
from acts_sql.engine.budget import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_LLM_CALLS,
    DEFAULT_MAX_NODES,
    DEFAULT_MAX_SECONDS,
)
from acts_sql.engine.events import EVENTS, TraceEvent
from acts_sql.engine.inputs import MAX_QUESTION_CHARS, MAX_SQL_CHARS, checked_inputs
from acts_sql.engine.options import DEFAULT_TEMPERATURE, Method
from acts_sql.engine.result import CorrectionResult
from acts_sql.errors import ActsSqlError, ConfigError
from acts_sql.llm.base import LLMBackend
from acts_sql.llm.cache import CachedBackend
from acts_sql.llm.spec import parse_llm_spec
from acts_sql.protocol import PROTOCOL_MODELS
from acts_sql.sql.languages import default_registry, get_language
from acts_sql.viewer import render_html

app = typer.Typer(
    cls=OneLineErrors,  # every usage error: one `error:` line, exit 2
    add_completion=False,
    no_args_is_help=True,
    help="acts-sql corrects SQL: plan-guided, tree-structured, execution-grounded.",
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: flags shown as flags, help text never read as markup
)
register_bench(app)
register_logs_bench(bench_app)
register_everyday_bench(bench_app)
register_batch(app)
register_doctor(app)
app.command(name="serve")(serve)
app.command(name="mcp")(mcp)
EXIT_ACCEPTED, EXIT_NOT_ACCEPTED = 0, 1


def _print_version(value: bool) -> None:
    if value:
        sys.stdout.write(f"acts-sql {__version__}\n")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", is_eager=True, callback=_print_version, help="print the version and exit"
        ),
    ] = False,
) -> None:
    """acts-sql corrects SQL: plan-guided, tree-structured, execution-grounded."""


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


DbOpt = Annotated[str, typer.Option(help="database URL (sqlite:///path.db) or file path")]
QuestionOpt = Annotated[str, typer.Option(help="what the user wants: the issue or the question")]
SqlOpt = Annotated[
    str | None,
    typer.Option(help="the SQL to correct; omit for text-to-SQL mode (empty SQL is an error)"),
]
SqlFileOpt = Annotated[
    Path | None,
    typer.Option("--sql-file", help="read the SQL to correct from this file (- for stdin)"),
]
QuestionFileOpt = Annotated[
    Path | None,
    typer.Option("--question-file", help="read the question from this file (- for stdin)"),
]
DialectOpt = Annotated[str | None, typer.Option(help="SQL dialect; default: the database's")]
LanguageOpt = Annotated[
    str | None,
    typer.Option(
        help="query language of the query and the answer, e.g. prql (compiled to the "
        "database's SQL to run; `acts-sql languages` lists them); default: the "
        "language of the --sql-file suffix (.prql), else the database's SQL"
    ),
]
FixLlm = Annotated[
    str | None,
    typer.Option(
        help="LLM SPEC: openai:MODEL, local:NAME, local:PATH.gguf, scripted:PATH "
        "(default: an endpoint from OPENAI_BASE_URL/OPENAI_API_KEY, else the embedded "
        "local model)"
    ),
]
MethodOpt = Annotated[
    Method,
    typer.Option(
        parser=method_flag,
        metavar="<str>",
        help="acts | linear | critic | raw | vote | dac | maplerepair",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="print the result object as JSON")]
TraceOpt = Annotated[Path | None, typer.Option(help="write the trace events as JSON to this file")]
HtmlOpt = Annotated[
    Path | None, typer.Option(help="write the debugging tree as a self-contained HTML page")
]


@app.command()
def fix(
    ctx: typer.Context,
    db: DbOpt,
    question: QuestionOpt = "",
    sql: SqlOpt = None,
    sql_file: SqlFileOpt = None,
    question_file: QuestionFileOpt = None,
    dialect: DialectOpt = None,
    language: LanguageOpt = None,
    llm: FixLlm = None,
    llm_cache: LlmCache = None,
    base_url: BaseUrl = None,
    api_key: ApiKey = None,
    llm_timeout: LlmTimeout = None,
    method: MethodOpt = Method.ACTS,
    as_json: JsonOpt = False,
    trace: TraceOpt = None,
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
    html: HtmlOpt = None,
    ask: AskOpt = False,
) -> None:
    """Correct SQL so it does what the question or issue asks."""
    console = make_console(stderr=as_json)
    activity = Activity()
    listen = activity if as_json else fan_out(activity, progress_printer(console))
    with interruptible(lambda: f"the correction ({activity.where()}); nothing was written"):
        try:
            result = run_fix(ctx.params, listen)
        except ActsSqlError as exc:
            raise fail(str(exc)) from None
    emit_outputs(result, as_json=as_json, trace=trace, html=html, console=console)
    raise typer.Exit(EXIT_ACCEPTED if result.accepted else EXIT_NOT_ACCEPTED)


def run_fix(flags: dict[str, Any], listen: Callable[[TraceEvent], None]) -> CorrectionResult:
    """`fix` from its flags (by parameter name): bad input (unreadable files, an unknown
    language, a database that cannot be opened) is reported before an LLM is set up (which
    may load a model, or be missing altogether)."""
    question, sql = read_texts(flags)
    if flags.get("ask"):
        ask_cli.require_terminal()
    writable_file(flags["trace"], "--trace")
    writable_file(flags["html"], "--html")
    writable_dir(flags["llm_cache"], "--llm-cache")
    language = query_language(flags["language"], flags["sql_file"])
    given = {name: flags[name] for name in ("timeout", "max_rows", "allow_writes")}
    executor = open_database(flags["db"], flags["dialect"], **given)
    try:
        options = correction_options(flags)
        backend = make_backend(flags["llm"], llm_overrides(flags), cache=flags["llm_cache"])
        return correct(
            executor,
            question,
            sql,
            llm=backend,
            options=options,
            on_event=listen,
            dialect=flags["dialect"],
            language=language,
            asker=ask_cli.terminal_asker(make_console(stderr=True)) if flags.get("ask") else None,
        )
    finally:
        executor.close()


def read_texts(flags: dict[str, Any]) -> tuple[str, str | None]:
    """The question and the SQL of `fix`, from their flags or files, checked: not both
    forms, one stdin at most, within the input limits, the SQL not empty when given."""
    sql_file, question_file = flags["sql_file"], flags["question_file"]
    one_stdin({"--sql-file": sql_file, "--question-file": question_file})
    sql = text_option(
        flags["sql"], sql_file, flag="--sql", file_flag="--sql-file", limit=MAX_SQL_CHARS
    )
    question = text_option(
        flags["question"] or None,
        question_file,
        flag="--question",
        file_flag="--question-file",
        limit=MAX_QUESTION_CHARS,
    )
    if sql is not None and not sql.strip():
        named = f"--sql-file {sql_file}" if sql_file is not None else "--sql"
        raise ConfigError(
            f"{named} is empty: give the SQL to correct (leave out --sql and --sql-file "
            "for text-to-SQL mode)"
        )
    return checked_inputs(question, sql)


def query_language(language: str | None, sql_file: Path | None) -> str | None:
    """`--language`, else the one of the `--sql-file` suffix; an unknown one is bad input."""
    if language is None and sql_file is not None and str(sql_file) != "-":
        by_suffix = default_registry().for_suffix(sql_file.suffix)
        language = by_suffix.name if by_suffix is not None else None
    if language is not None:
        get_language(language)
    return language


def make_backend(spec: str | None, overrides: dict[str, Any], *, cache: Path | None) -> LLMBackend:
    """The backend of `--llm` (with `--base-url`, `--api-key`, `--llm-timeout`: `overrides`),
    behind `--llm-cache` if given."""
    backend = parse_llm_spec(spec, **overrides)
    return CachedBackend(backend, cache) if cache is not None else backend


def emit_outputs(
    result: CorrectionResult,
    *,
    as_json: bool,
    trace: Path | None,
    html: Path | None,
    console: Console,
) -> None:
    """The result on the terminal (or as JSON), then the --trace and --html files."""
    with interruptible(
        lambda: "writing the output; the --trace and --html files may be incomplete"
    ):
        try:
            emit_result(result, as_json=as_json, trace=trace, console=console)
            if html is not None:
                html.write_text(render_html(result), encoding="utf-8")
        except OSError as exc:
            raise fail(
                f"cannot write {exc.filename or 'the output'}: {exc.strerror or exc}"
            ) from None


@app.command()
def demo(
    task: Annotated[
        str | None, typer.Option(help=f"run one example task by id: {', '.join(task_ids())}")
    ] = None,
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
def languages(
    as_json: Annotated[
        bool, typer.Option("--json", help="print the languages as a JSON object")
    ] = False,
) -> None:
    """List the query languages: the SQL dialects and the installed plugins (PRQL, ...)."""
    registry = default_registry()
    infos, failures = registry.infos(), registry.failures()
    if as_json:
        payload = {
            "languages": [i.model_dump() for i in infos],
            "not_loadable": [f.model_dump() for f in failures],
        }
        sys.stdout.write(json.dumps(payload, indent=1) + "\n")
        return
    console = make_console(stderr=False)
    console.print(languages_table(infos, failures))


@app.command()
def protocol() -> None:
    """Print the JSON Schema of the plan protocol (the agent's JSON replies) and of the
    trace events."""
    sys.stdout.write(json.dumps(protocol_schema(), indent=2) + "\n")


def protocol_schema() -> dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "acts-sql plan protocol",
        "$defs": {
            **{name: model.model_json_schema() for name, model in PROTOCOL_MODELS.items()},
            "TraceEvent": EVENTS.json_schema(),
        },
    }


def main() -> None:
    # sqlglot warns on stderr for every statement it keeps as raw text
    # ("contains unsupported syntax"): expected here, and noise for a user
    logging.getLogger("sqlglot").setLevel(logging.ERROR)
    app(prog_name="acts-sql")  # also under `python -m acts_sql`
