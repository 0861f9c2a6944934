"""`acts-sql mcp`: acts-sql as a Model Context Protocol server over stdio (the `mcp`
extra), for assistants such as Claude Desktop, Cursor and IDE agents.

`ActsSqlTools` (in `acts_sql.mcp_server.tools`) does the work and needs no SDK;
`build_server` (in `acts_sql.mcp_server.server`, which imports the SDK) exposes it as
the tools `fix_sql`, `explain_run` and `list_tables`. See docs/MCP.md.
"""

from acts_sql.mcp_server.tools import ActsSqlTools, McpSettings

__all__ = ["ActsSqlTools", "McpSettings"]
