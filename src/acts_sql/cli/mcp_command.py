"""`acts-sql mcp`: acts-sql as an MCP server over stdio (needs the `mcp` extra).

The flags are those of `fix` that say how a correction runs; the question and the SQL
come with each `fix_sql` call. Configuration (limits, the LLM spec, the method) is
checked at start: a bad value ends the command with one `error:` line and exit 2. The
database is opened for each tool call, so a database that cannot be opened is an error
of that call, and the server keeps running.
"""

from __future__ import annotations

import io
from typing import Annotated, Any

import typer

from acts_sql.cli.console import SafeConsole, fail, interruptible
from acts_sql.cli.inputs import writable_dir
from acts_sql.cli.options import (
    AllowWrites,
    ApiKey,
    BaseUrl,
    Candidates,
    Llm,
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
from acts_sql.cli.render import show_result
from acts_sql.engine.budget import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_LLM_CALLS,
    DEFAULT_MAX_NODES,
    DEFAULT_MAX_SECONDS,
)
from acts_sql.engine.options import DEFAULT_TEMPERATURE, Method
from acts_sql.engine.result import CorrectionResult
from acts_sql.errors import ActsSqlError
from acts_sql.llm.base import LLMBackend
from acts_sql.llm.cache import CachedBackend
from acts_sql.llm.spec import parse_llm_spec
from acts_sql.mcp_server import ActsSqlTools, McpSettings

EXPLAIN_WIDTH = 110
"""Columns of the text `explain_run` returns."""
INSTALL_HINT = "pip install 'acts-sql[mcp]'"

McpDb = Annotated[
    str,
    typer.Option(help="database URL (sqlite:///path.db) or file path, opened for each tool call"),
]
McpDialect = Annotated[str | None, typer.Option(help="SQL dialect; default: the database's")]
McpMethod = Annotated[
    Method,
    typer.Option(parser=method_flag, metavar="<str>", help=" | ".join(m.value for m in Method)),
]
KeepRuns = Annotated[
    int, typer.Option(min=1, help="runs kept in memory for explain_run (the oldest go first)")
]
PreviewRows = Annotated[int, typer.Option(min=0, help="rows of the result preview of fix_sql")]
McpAsk = Annotated[
    bool,
    typer.Option(
        "--ask",
        help="fix_sql returns the readings when they lead to different results and nothing is "
        "accepted, for the assistant to ask its user; choose_reading(run_id, reading) goes on",
    ),
]


def mcp(
    ctx: typer.Context,
    db: McpDb,
    dialect: McpDialect = None,
    llm: Llm = None,
    llm_cache: LlmCache = None,
    base_url: BaseUrl = None,
    api_key: ApiKey = None,
    llm_timeout: LlmTimeout = None,
    method: McpMethod = Method.ACTS,
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
    keep_runs: KeepRuns = 50,
    preview_rows: PreviewRows = 10,
    ask: McpAsk = False,
) -> None:
    """Serve the tools fix_sql, choose_reading, explain_run and list_tables over stdio (MCP), for
    assistants such as Claude Desktop and Cursor (see docs/MCP.md)."""
    try:
        from acts_sql.mcp_server.server import build_server
    except ImportError as exc:
        raise fail(f"acts-sql mcp needs the mcp extra ({exc.name}): {INSTALL_HINT}") from None
    try:
        tools = ActsSqlTools(mcp_settings(ctx.params), mcp_backend(ctx.params), explain_text)
    except ActsSqlError as exc:
        raise fail(str(exc)) from None
    with interruptible(lambda: "the MCP server; nothing was written"):
        build_server(tools).run("stdio")


def mcp_settings(flags: dict[str, Any]) -> McpSettings:
    """The server's settings from its flags; ConfigError for a value that is not valid."""
    names = (
        "db",
        "dialect",
        "timeout",
        "max_rows",
        "allow_writes",
        "keep_runs",
        "preview_rows",
        "ask",
    )
    options = correction_options(flags)
    return McpSettings.of(**{name: flags[name] for name in names}, options=options)


def mcp_backend(flags: dict[str, Any]) -> LLMBackend:
    """The backend of `--llm` (with `--base-url`, `--api-key`, `--llm-timeout`, behind
    `--llm-cache`), as `fix` builds it. Building is cheap: a local model loads on its first
    call."""
    backend = parse_llm_spec(flags["llm"], **llm_overrides(flags))
    cache = flags["llm_cache"]
    writable_dir(cache, "--llm-cache")
    return CachedBackend(backend, cache) if cache is not None else backend


def explain_text(result: CorrectionResult) -> str:
    """What `acts-sql fix` prints for `result`, as plain text (no colours)."""
    out = io.StringIO()
    console = SafeConsole(
        file=out,
        width=EXPLAIN_WIDTH,
        markup=False,
        emoji=False,
        highlight=False,
        color_system=None,
        force_terminal=False,
    )
    show_result(console, result)
    return out.getvalue()
