"""`run_sql`: run any read-only statement and show its typed result.

Input: `{"sql": "SELECT ..."}`. The statement goes through the executor, so it
has the executor's timeout, row cap and read-only guard; a blocked or failing
statement is a result the agent sees, not an error of the tool.
"""

from __future__ import annotations

from acts_sql.db.result import ExecResult
from acts_sql.tools.base import (
    Tool,
    ToolArgs,
    ToolCall,
    ToolEnv,
    ToolOutcome,
    ToolOutput,
    advertised,
)


class RunSqlArgs(ToolArgs):
    sql: str = advertised("S", min_length=1)


class RunSqlOutput(ToolOutput):
    sql: str
    result: ExecResult
    """Its first rows (`ExecResult.preview`)."""


class RunSqlTool(Tool[RunSqlArgs]):
    name = "run_sql"
    description = "runs a read-only statement and shows its result."
    Args = RunSqlArgs
    Output = RunSqlOutput
    uses_execution = True
    produces_candidate = False

    def run(self, env: ToolEnv, call: ToolCall, args: RunSqlArgs) -> ToolOutcome:
        result = env.executor.execute(args.sql)
        return ToolOutcome(
            status="done",
            summary=result.summary(),
            output=RunSqlOutput(sql=args.sql, result=result.preview()),
        )
