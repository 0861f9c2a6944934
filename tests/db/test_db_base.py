"""The execute loop every executor shares (`db.base.BaseExecutor`), over a fake engine."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from acts_sql.db.base import BaseExecutor
from acts_sql.db.dbapi_executor import DbapiExecutor
from acts_sql.db.duckdb_executor import DuckDBExecutor
from acts_sql.db.executor import Executor
from acts_sql.db.mssql import MSSQLExecutor
from acts_sql.db.mysql import MySQLExecutor
from acts_sql.db.oracle import OracleExecutor
from acts_sql.db.postgres import PostgresExecutor
from acts_sql.db.result import ExecResult
from acts_sql.db.sqlite import SQLiteExecutor
from acts_sql.sql.dialects import Dialect, get_dialect


class FakeEngine(BaseExecutor):
    """Logs the loop's calls; `answers` maps a statement to its result."""

    spec = get_dialect("postgresql")

    def __init__(self, *, allow_writes: bool = False, probe: ExecResult | None = None) -> None:
        super().__init__(allow_writes=allow_writes)
        self.log: list[str] = []
        self.answers: dict[str, ExecResult] = {}
        self.probe = probe

    @contextmanager
    def scratch(self) -> Iterator[FakeEngine]:
        yield self

    def _begin(self, *, read_only: bool | None = None, isolating: bool = False) -> None:
        self.log.append(f"begin read_only={read_only} isolating={isolating}")

    def _end(self) -> None:
        self.log.append("end")

    def _run_statement(self, statement: str, max_rows: int, timeout: float) -> ExecResult:
        self.log.append(f"{statement} [{max_rows} rows, {timeout:g} s]")
        return self.answers.get(statement, ExecResult(status="ok"))

    def _probe_statement(self, statement: str) -> ExecResult | None:
        self.log.append(f"probe {statement}")
        return self.probe

    def _disconnect(self) -> None:
        self.log.append("disconnect")


def test_every_engine_runs_the_shared_loop_and_holds_its_dialect() -> None:
    engines = [
        SQLiteExecutor,
        DuckDBExecutor,
        PostgresExecutor,
        MySQLExecutor,
        MSSQLExecutor,
        OracleExecutor,
    ]
    for engine in engines:
        assert issubclass(engine, BaseExecutor), engine
        assert isinstance(engine.spec, Dialect)
    assert issubclass(MSSQLExecutor, DbapiExecutor) and issubclass(OracleExecutor, DbapiExecutor)
    assert [engine.spec.name for engine in engines] == [
        "sqlite",
        "duckdb",
        "postgresql",
        "mysql",
        "sqlserver",
        "oracle",
    ]


def test_a_batch_runs_each_statement_with_its_limits_then_ends() -> None:
    engine = FakeEngine()
    assert isinstance(engine, Executor) and engine.dialect == "postgresql"
    engine.answers["SELECT 2"] = ExecResult(status="error", error="x", error_position=8)
    sql = "SELECT 1; SELECT 2; SELECT 3"
    result = engine.execute(sql, max_rows=5)
    assert result.error_position == 18  # counted in the caller's text
    assert engine.log == [
        "begin read_only=None isolating=False",
        "SELECT 1 [5 rows, 60 s]",
        "SELECT 2 [5 rows, 60 s]",
        "end",
    ]


def test_blocked_text_and_a_closed_executor_reach_nothing() -> None:
    engine = FakeEngine()
    assert engine.execute("DROP TABLE t").status == "blocked"
    assert engine.execute("  -- only a comment").error == "no SQL statement to execute"
    engine.close()
    engine.close()
    assert engine.log == ["disconnect"]
    assert engine.execute("SELECT 1").error == "the executor is closed"


def test_isolate_counts_only_with_writes_allowed() -> None:
    reader, writer = FakeEngine(), FakeEngine(allow_writes=True)
    reader.execute("SELECT 1", isolate=True)
    writer.execute("SELECT 1", isolate=True)
    assert reader.log[0] == "begin read_only=None isolating=False"
    assert writer.log[0] == "begin read_only=None isolating=True"


@pytest.mark.parametrize(
    ("probe", "status"),
    [
        (ExecResult(status="error", error="syntax error", error_kind="syntax"), "error"),
        (ExecResult(status="timeout", error="timeout", error_kind="timeout"), "blocked"),
        (None, "blocked"),
    ],
)
def test_unparseable_text_gets_the_engines_error_or_is_blocked(
    probe: ExecResult | None, status: str
) -> None:
    engine = FakeEngine(probe=probe)
    result = engine.execute("SELECT (1")
    assert result.status == status
    assert engine.log == ["probe SELECT (1"]  # parsed, never run


def test_internal_queries_run_read_only_with_the_reflection_limit() -> None:
    engine = FakeEngine()
    assert engine.run_internal("SELECT 1", 3).ok
    assert engine.log == ["begin read_only=True isolating=False", "SELECT 1 [3 rows, 10 s]", "end"]
