"""The tool registry: name -> tool instance."""

from __future__ import annotations

from types import MappingProxyType

from acts_sql.tools.base import Tool
from acts_sql.tools.detect_ambiguities import DetectAmbiguitiesTool
from acts_sql.tools.generate_sql import GenerateSqlTool
from acts_sql.tools.inspect_columns import InspectColumnsTool
from acts_sql.tools.run_sql import RunSqlTool
from acts_sql.tools.split_fix_syntax import SplitFixSyntaxTool

TOOLS: MappingProxyType[str, Tool] = MappingProxyType(
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
