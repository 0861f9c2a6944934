"""The tool registry (name -> tool), running a tool on a node's validated input, and the
system prompt's tool list rendered from it."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from pydantic import ValidationError

from acts_sql.tools.base import Tool, ToolArgs, ToolCall, ToolEnv, ToolOutcome
from acts_sql.tools.detect_ambiguities import DetectAmbiguitiesTool
from acts_sql.tools.generate_sql import GenerateSqlTool
from acts_sql.tools.inspect_columns import InspectColumnsTool
from acts_sql.tools.run_sql import RunSqlTool
from acts_sql.tools.split_fix_syntax import SplitFixSyntaxTool

Tools = Mapping[str, Tool[Any]]

TOOLS: Tools = MappingProxyType(
    {
        tool.name: tool
        for tool in (
            DetectAmbiguitiesTool(),
            InspectColumnsTool(),
            RunSqlTool(),
            SplitFixSyntaxTool(),
            GenerateSqlTool(),
        )
    }
)
"""The five tools of the Central Agent, one module each, in one registry."""


def run_tool(name: str, env: ToolEnv, call: ToolCall, tools: Tools = TOOLS) -> ToolOutcome:
    """Run the tool `name` on `call.input` validated against its `Args`; input that does
    not fit is a failed outcome ("invalid input for <tool>: <field>: <problem>")."""
    tool = tools[name]
    try:
        args = tool.Args.model_validate(call.input)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'input'}: {err['msg']}"
            for err in exc.errors()
        )
        return ToolOutcome.failed(f"invalid input for {name}: {problems}")
    return tool.run(env, call, args)


def tool_list(tools: Tools = TOOLS) -> str:
    """The system prompt's tool list: a line per tool with the arguments it shows."""
    return "\n".join(
        f"- {name} {_advertised_args(tool.Args)}: {tool.description}"
        for name, tool in tools.items()
    )


def _advertised_args(args: type[ToolArgs]) -> str:
    """`{"table": T, "column": C}`: the `advertised` fields with their placeholders."""
    shown = [
        f'"{name}": {extra["advertised_as"]}'
        for name, field in args.model_fields.items()
        if isinstance(extra := field.json_schema_extra, dict) and "advertised_as" in extra
    ]
    return "{" + ", ".join(shown) + "}"
