"""The MCP server: the tools of `ActsSqlTools` on the official `mcp` SDK's `MCPServer`,
served over stdio. A failure the user can act on (bad input, a database that cannot be
opened, an LLM that cannot be used, an unknown run id) is a tool error with its one-line
reason; the server goes on answering the next call."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from acts_sql import __version__
from acts_sql.errors import ActsSqlError
from acts_sql.mcp_server.models import ExplainOutput, FixSqlOutput, TablesOutput
from acts_sql.mcp_server.tools import ActsSqlTools

SERVER_NAME = "acts-sql"
INSTRUCTIONS = (
    "acts-sql corrects SQL against the connected database (read-only unless the server was "
    "started with --allow-writes, and then only on a throw-away copy). Call list_tables to "
    "see the schema, fix_sql with the user's question and their SQL to get the SQL they "
    "meant (accepted tells whether the engine's checks passed), and explain_run with the "
    "returned run_id to show how it got there. When fix_sql returns needs_choice, show the "
    "user the readings (each with its SQL and first rows), ask which they meant, and call "
    "choose_reading with its id."
)
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
SAFE_RUN = ToolAnnotations(read_only_hint=True, idempotent_hint=False, open_world_hint=True)

Question = Annotated[str, Field(description="what the user wants: the question or the issue")]
Sql = Annotated[
    str | None,
    Field(description="the SQL to correct; leave out to write it from the question first"),
]
RunId = Annotated[str, Field(description="a run_id that fix_sql returned")]
Reading = Annotated[str, Field(description="the id of one of the readings fix_sql returned")]


def build_server(tools: ActsSqlTools) -> MCPServer:
    """An MCP server with the tools `fix_sql`, `choose_reading`, `explain_run` and
    `list_tables`."""
    server: MCPServer = MCPServer(
        SERVER_NAME, instructions=INSTRUCTIONS, version=__version__, log_level="WARNING"
    )

    @server.tool(annotations=SAFE_RUN, structured_output=True)
    def fix_sql(question: Question, sql: Sql = None) -> FixSqlOutput:
        """Correct SQL so it does what the question asks, checked against the database's
        real results. Returns the SQL, whether it was accepted and why the search stopped,
        the first rows it gives, the cost, and a run_id for explain_run."""
        try:
            return tools.fix_sql(question, sql)
        except ActsSqlError as exc:
            raise ToolError(str(exc)) from None

    @server.tool(annotations=SAFE_RUN, structured_output=True)
    def choose_reading(run_id: RunId, reading: Reading) -> FixSqlOutput:
        """Continue a fix_sql run that returned needs_choice, with the id of the reading the
        user meant; returns what fix_sql returns for the finished run."""
        try:
            return tools.choose_reading(run_id, reading)
        except ActsSqlError as exc:
            raise ToolError(str(exc)) from None

    @server.tool(annotations=READ_ONLY)
    def explain_run(run_id: RunId) -> Annotated[CallToolResult, ExplainOutput]:
        """The debugging tree of a fix_sql run as text: the plan, the branches tried and
        pruned (with why), the candidates, the verdict and the final SQL with its rows."""
        try:
            explained = tools.explain_run(run_id)
        except ActsSqlError as exc:
            raise ToolError(str(exc)) from None
        return CallToolResult(
            content=[TextContent(type="text", text=explained.text)],
            structured_content=explained.model_dump(mode="json"),
        )

    @server.tool(annotations=READ_ONLY, structured_output=True)
    def list_tables() -> TablesOutput:
        """The connected database's tables, each with its columns, their types, nullability
        and primary key, and the row count."""
        try:
            return tools.list_tables()
        except ActsSqlError as exc:
            raise ToolError(str(exc)) from None

    return server
