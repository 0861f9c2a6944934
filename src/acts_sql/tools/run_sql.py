"""`run_sql`: run any read-only statement and show its typed result.

Input: `{"sql": "SELECT ..."}`. The statement goes through the executor, so it
has the executor's timeout, row cap and read-only guard; a blocked or failing
statement is a result the agent sees, not an error of the tool.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from acts_sql.tools.base import ToolArgs, ToolCall, ToolEnv, ToolOutcome, parse_args


class RunSqlArgs(ToolArgs):
    sql: str = Field(min_length=1)


class RunSqlTool:
    name: ClassVar[str] = "run_sql"
    args_model: ClassVar[type[ToolArgs]] = RunSqlArgs
    uses_execution: ClassVar[bool] = True
    produces_candidate: ClassVar[bool] = False

    def run(self, env: ToolEnv, call: ToolCall) -> ToolOutcome:
        args = parse_args(self.name, RunSqlArgs, call.input)
        if isinstance(args, str):
            return ToolOutcome.failed(args)
        result = env.executor.execute(args.sql)
        return ToolOutcome(
            status="done",
            summary=result.summary(),
            output={"sql": args.sql, "result": result.preview().model_dump()},
        )
