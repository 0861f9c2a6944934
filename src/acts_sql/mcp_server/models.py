"""The typed results of the MCP tools: what an assistant reads back (as structured content,
and as JSON text for clients that read only text)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from acts_sql.db.executor import TableInfo
from acts_sql.db.result import ExecResult
from acts_sql.engine.choice import ChoiceQuestion, ReadingOption
from acts_sql.engine.result import CorrectionResult


class ResultPreview(BaseModel):
    """The first rows of what the returned SQL gives on the database, or why it gave none."""

    status: str = Field(description="ok, error, timeout or blocked")
    columns: list[str] = Field(default_factory=list)
    rows: list[list[Any]] = Field(default_factory=list, description="the first rows")
    row_count: int = Field(0, description="rows the statement returned (up to the row cap)")
    truncated: bool = Field(False, description="the row cap was reached")
    error: str | None = None

    @classmethod
    def of(cls, result: ExecResult, max_rows: int) -> ResultPreview:
        return cls(
            status=result.status,
            columns=result.columns,
            rows=result.rows[:max_rows],
            row_count=result.row_count,
            truncated=result.truncated,
            error=result.failure() or None,
        )


class Cost(BaseModel):
    """What the correction cost."""

    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    seconds: float = Field(description="wall time of the whole correction")


class FixSqlOutput(BaseModel):
    """`fix_sql`: the SQL to use, whether the engine accepted it, and why."""

    run_id: str = Field(description="pass it to explain_run to see the debugging tree")
    sql: str = Field(description="the corrected SQL (the best candidate when not accepted)")
    accepted: bool = Field(description="a candidate passed the engine's checks")
    reason: str = Field(description="why the search stopped")
    original_sql: str
    method: str
    dialect: str
    preview: ResultPreview | None = Field(None, description="what `sql` returns: first rows")
    cost: Cost
    needs_choice: bool = Field(
        False,
        description="the run waits: ask the user which reading they meant, then call "
        "choose_reading(run_id, reading) with its id",
    )
    readings: list[ReadingOption] = Field(
        default_factory=list, description="with needs_choice: each reading, its SQL and rows"
    )

    @classmethod
    def waiting(
        cls, run_id: str, question: ChoiceQuestion, sql: str, method: str, dialect: str
    ) -> FixSqlOutput:
        """A run that asks: no SQL yet, the readings to choose from."""
        return cls(
            run_id=run_id,
            sql="",
            accepted=False,
            reason="the readings lead to different results: waiting for choose_reading",
            original_sql=sql,
            method=method,
            dialect=dialect,
            cost=Cost(llm_calls=0, prompt_tokens=0, completion_tokens=0, seconds=0.0),
            needs_choice=True,
            readings=question.readings,
        )

    @classmethod
    def of(cls, run_id: str, result: CorrectionResult, preview_rows: int) -> FixSqlOutput:
        usage = result.usage
        return cls(
            run_id=run_id,
            sql=result.sql,
            accepted=result.accepted,
            reason=result.reason,
            original_sql=result.original_sql,
            method=result.method,
            dialect=result.dialect,
            preview=ResultPreview.of(result.result, preview_rows) if result.result else None,
            cost=Cost(
                llm_calls=usage.llm_calls,
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
                seconds=usage.seconds,
            ),
        )


class ExplainOutput(BaseModel):
    """`explain_run`: one kept run, as the text `acts-sql fix` prints for it."""

    run_id: str
    accepted: bool
    text: str = Field(description="the debugging tree, the candidates and the verdict")


class ColumnSchema(BaseModel):
    name: str
    type: str = ""
    nullable: bool = True
    primary_key: bool = False


class TableSchema(BaseModel):
    name: str
    columns: list[ColumnSchema]
    row_count: int | None = None

    @classmethod
    def of(cls, table: TableInfo) -> TableSchema:
        columns = [ColumnSchema.model_validate(c.model_dump()) for c in table.columns]
        return cls(name=table.name, columns=columns, row_count=table.row_count)


class TablesOutput(BaseModel):
    """`list_tables`: the connected database's tables, with their columns and types."""

    dialect: str
    tables: list[TableSchema]
