"""`inspect_columns`: what a column really holds.

Input: `{"table": "t", "column": "c"}` or `{"table": "t", "columns": ["a", "b"]}`
(a column may also be written `"t.c"`). Without a column, the columns the
user's SQL reads (in an UPDATE or DELETE too) are inspected, those in its
conditions first, at most
`DEFAULT_COLUMNS` (a small planner often lists this step with no input: 10
such steps failed in an acts run with the 0.5B on 16 tasks). For each column two fixed,
dialect-correct template queries run (built with sqlglot, see
`acts_sql.sql.templates`): a profile (total rows, non-null, distinct) and the
most frequent values with their counts. The summary gives type hints, the
null share and the top values, which is what the agent needs to see that
`'Electronics'` is stored as `'Home Electronics'`. The templates are SQL:
with a query language such as PRQL they run on the database behind it
(`acts_sql.db.language.database_executor`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from acts_sql.db.language import database_executor
from acts_sql.sql.entities import condition_columns
from acts_sql.sql.templates import column_profile_sql, column_values_sql
from acts_sql.tools.base import (
    Tool,
    ToolArgs,
    ToolCall,
    ToolEnv,
    ToolOutcome,
    ToolOutput,
    advertised,
    not_advertised,
)

TOP_VALUES = 12
DEFAULT_COLUMNS = 4


class InspectColumnsArgs(ToolArgs):
    table: str | None = advertised("T", None)
    column: str | None = advertised("C", None)
    columns: list[str] = not_advertised(
        "accepted; the tool list shows the one-column form", default_factory=list
    )

    def targets(self) -> list[tuple[str, str]]:
        """(table, column) pairs; `t.c` names carry their own table."""
        pairs = []
        for name in ([self.column] if self.column else []) + self.columns:
            table, _, column = name.rpartition(".")
            table = table or self.table or ""
            pairs.append((table, column))
        return pairs


class ColumnFailure(BaseModel):
    """A column whose profile query did not run."""

    table: str
    column: str
    status: str
    error: str | None


class ColumnProfile(BaseModel):
    """A column's profile; the counts as the database returns them."""

    table: str
    column: str
    status: str = "ok"
    total_rows: Any
    non_null: Any
    distinct_values: Any
    null_share: float
    top_values: list[dict[str, Any]]
    """The most frequent values: `{"value", "count"}`."""


class InspectColumnsOutput(ToolOutput):
    columns: list[ColumnProfile | ColumnFailure]


class InspectColumnsTool(Tool[InspectColumnsArgs]):
    name = "inspect_columns"
    description = "distinct values, null share and counts of a column."
    Args = InspectColumnsArgs
    Output = InspectColumnsOutput
    uses_execution = True
    produces_candidate = False

    def run(self, env: ToolEnv, call: ToolCall, args: InspectColumnsArgs) -> ToolOutcome:
        targets = args.targets() or condition_columns(
            env.task.original_sql, env.task.dialect, env.task.facts(), DEFAULT_COLUMNS
        )
        if not targets:
            return ToolOutcome.failed(
                "give `column` or `columns` (the user's SQL reads no column of a known table)"
            )
        reports: list[ColumnProfile | ColumnFailure] = []
        lines: list[str] = []
        for table, column in targets:
            if not table:
                return ToolOutcome.failed(f"no table given for column {column!r}")
            report, line = self._inspect(env, table, column)
            reports.append(report)
            lines.append(line)
        failed = all(r.status != "ok" for r in reports)
        return ToolOutcome(
            status="failed" if failed else "done",
            summary="\n".join(lines),
            output=InspectColumnsOutput(columns=reports),
            error=lines[0] if failed else None,
        )

    def _inspect(
        self, env: ToolEnv, table: str, column: str
    ) -> tuple[ColumnProfile | ColumnFailure, str]:
        # the templates are SQL: with a query language (PRQL), they run on its database
        executor = database_executor(env.executor)
        dialect = env.task.dialect if executor is env.executor else executor.dialect
        profile = executor.execute(column_profile_sql(table, column, dialect))
        if not profile.ok:
            failure = ColumnFailure(
                table=table, column=column, status=profile.status, error=profile.error
            )
            return failure, f"{table}.{column}: {profile.summary()}"
        total, non_null, distinct = (profile.rows[0] + [0, 0, 0])[:3] if profile.rows else (0, 0, 0)
        values = executor.execute(column_values_sql(table, column, dialect, limit=TOP_VALUES))
        top = [(row[0], row[1]) for row in values.rows] if values.ok else []
        null_share = 0.0 if not total else 1 - (non_null or 0) / total
        shown = ", ".join(f"{v!r} ({n})" for v, n in top)
        line = (
            f"{table}.{column}: {total} rows, {null_share:.0%} null, {distinct} distinct; "
            f"top values: {shown or '-'}"
        )
        report = ColumnProfile(
            table=table,
            column=column,
            total_rows=total,
            non_null=non_null,
            distinct_values=distinct,
            null_share=round(null_share, 4),
            top_values=[{"value": v, "count": n} for v, n in top],
        )
        return report, line
