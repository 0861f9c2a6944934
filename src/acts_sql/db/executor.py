"""The executor protocol: one implementation per dialect."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, Field

from acts_sql.db.result import ExecResult
from acts_sql.db.statements import is_recursive

DEFAULT_TIMEOUT_S = 60.0
RECURSIVE_TIMEOUT_S = 15.0
DEFAULT_MAX_ROWS = 10_000


def statement_timeout(statement: str, timeout: float | None = None) -> float:
    """`timeout`, else BIRD-CRITIC's limits: 15 s for `WITH RECURSIVE`, 60 s otherwise."""
    if timeout is not None:
        return timeout
    return RECURSIVE_TIMEOUT_S if is_recursive(statement) else DEFAULT_TIMEOUT_S


class ColumnInfo(BaseModel):
    name: str
    type: str = ""
    nullable: bool = True
    primary_key: bool = False


class TableInfo(BaseModel):
    """One table as the prompts see it: DDL, columns, a few sample rows."""

    name: str
    ddl: str
    columns: list[ColumnInfo] = Field(default_factory=list)
    sample_rows: list[list[object]] = Field(default_factory=list)
    row_count: int | None = None


@runtime_checkable
class ScratchSession(Protocol):
    """A private session in which empty stand-in tables can be created.

    Stand-ins live only in this session (e.g. SQLite TEMP tables) and vanish
    with it; the user's database is never written.
    """

    def create_stand_in(self, name: str, columns: list[str]) -> ExecResult: ...

    def execute(self, sql: str, *, max_rows: int | None = None) -> ExecResult: ...


@runtime_checkable
class Executor(Protocol):
    """Runs statements against one database, read-only, with timeout and row cap.

    `execute(sql, isolate=True)` runs the statements, returns the last result
    (or the first failure) and then leaves the database exactly as it was
    before the call, so that several alternative candidates are judged on the
    same starting state. It matters only for an executor that writes
    (`allow_writes=True`: a throw-away copy, or a transaction); a read-only
    executor never changes anything and may ignore it. Without it, the
    effects of one call stay for the next ones (a Management task's
    statements build on each other). What each engine can undo is listed in
    docs/DATABASES.md ("Candidates run isolated").
    """

    dialect: str

    def execute(
        self,
        sql: str,
        *,
        max_rows: int | None = None,
        timeout: float | None = None,
        isolate: bool = False,
    ) -> ExecResult: ...

    def scratch(self) -> AbstractContextManager[ScratchSession]: ...

    def reflect(self, sample_rows: int = 3) -> list[TableInfo]: ...

    def close(self) -> None: ...
