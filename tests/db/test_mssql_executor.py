"""The SQL Server executor without a server: the SQL it sends (checked by
sqlglot's T-SQL dialect), its error classification, and its control flow
over a fake DB-API connection."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal

import pymssql
import pytest
import sqlglot
from fake_dbapi import Connector, Rows

from acts_sql.db import mssql
from acts_sql.db.dbapi_executor import with_stand_ins
from acts_sql.db.executor import Executor, ScratchSession
from acts_sql.db.mssql import MSSQLExecutor
from acts_sql.db.url import parse_url
from acts_sql.errors import DatabaseOpenError
from acts_sql.sql.dialects import get_dialect

TSQL = get_dialect("sqlserver")
SETUP = mssql.session_setup_sql()


def parses(sql: str) -> sqlglot.exp.Expr:
    return sqlglot.parse_one(sql, read="tsql")


def db_error(number: int, text: str, cls: type[Exception] = pymssql.OperationalError) -> Exception:
    tail = "DB-Lib error message 20018, severity 16:\nGeneral SQL Server error: Check messages\n"
    return cls(number, f"{text}{tail}".encode())


# ------------------------------------------------------------------ SQL it sends


def test_every_statement_it_writes_parses_as_tsql() -> None:
    statements = [*SETUP, *mssql.begin_sql(), mssql.rollback_sql(), mssql.probe_sql("SELEC 1")]
    for statement in statements:
        parses(statement)
    reflection = TSQL.reflection
    assert reflection is not None
    for query in (reflection.tables, reflection.columns, reflection.keys):
        assert isinstance(parses(query), sqlglot.exp.Query)


def test_session_setup_and_transaction_bracket() -> None:
    assert "SET XACT_ABORT ON" in SETUP and "SET NOCOUNT ON" in SETUP
    assert mssql.begin_sql() == ["BEGIN TRANSACTION"]
    rollback = parses(mssql.rollback_sql())
    assert "@@TRANCOUNT > 0" in mssql.rollback_sql() and rollback.find(sqlglot.exp.Rollback)


def test_probe_passes_the_statement_as_one_escaped_unicode_literal() -> None:
    statement = "SELECT 'it''s'; DROP TABLE t --"
    probe = mssql.probe_sql(statement)
    assert "sys.dm_exec_describe_first_result_set(N'" in probe
    literal = parses(probe).find(sqlglot.exp.National)
    assert literal is not None and literal.this == statement
    assert parses(probe).find(sqlglot.exp.Drop) is None


def test_stand_ins_are_empty_ctes() -> None:
    sql = with_stand_ins("SELECT a FROM dep", {"dep": ["a", "b c"]}, TSQL)
    assert sql.startswith("WITH [dep] ([a], [b c]) AS (SELECT NULL, NULL WHERE 1 = 0)")
    tree = parses(sql)
    assert [cte.alias for cte in tree.find_all(sqlglot.exp.CTE)] == ["dep"]
    merged = with_stand_ins(
        "-- c\nWITH x AS (SELECT a FROM dep) SELECT * FROM x", {"dep": ["a"]}, TSQL
    )
    assert [cte.alias for cte in parses(merged).find_all(sqlglot.exp.CTE)] == ["dep", "x"]


@pytest.mark.parametrize(("seconds", "expected"), [(0.01, 1), (1.0, 1), (1.2, 2), (60, 60)])
def test_query_timeout_is_whole_seconds(seconds: float, expected: int) -> None:
    assert mssql.query_timeout(seconds) == expected


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize(
    ("number", "kind"),
    [
        (102, "syntax"),
        (156, "syntax"),
        (105, "syntax"),
        (207, "schema"),
        (208, "schema"),
        (4104, "schema"),
        (245, "type"),
        (8114, "type"),
        (8134, "runtime"),
        (512, "runtime"),
        (20009, "other"),
    ],
)
def test_message_numbers_map_to_kinds(number: int, kind: str) -> None:
    result = mssql.classify(db_error(number, "Something."), timeout=5)
    assert (result.status, result.error_kind, result.error_code) == ("error", kind, str(number))


def test_messages_lose_the_db_lib_tail() -> None:
    exc = db_error(208, "Invalid object name 'ordres'.", pymssql.ProgrammingError)
    result = mssql.classify(exc, timeout=5)
    assert result.error == "Invalid object name 'ordres'."


def test_timeouts_and_permissions() -> None:
    timed = mssql.classify(db_error(20003, "Adaptive Server connection timed out"), timeout=2)
    assert (timed.status, timed.error, timed.error_code) == (
        "timeout",
        "timeout: statement exceeded 2 s",
        "20003",
    )
    denied = mssql.classify(db_error(229, "The SELECT permission was denied."), timeout=2)
    assert denied.status == "blocked" and denied.error_kind == "blocked"
    unknown = mssql.classify(RuntimeError("boom"), timeout=2)
    assert unknown.error_kind == "other" and unknown.error == "boom"


def test_cells_are_json_safe() -> None:
    conn = Connector(
        lambda sql: (
            Rows(
                ["a", "b", "c", "d", "e"],
                [
                    (
                        Decimal("1.50"),
                        dt.datetime(2024, 1, 2, 3, 4),
                        b"\x00\xff",
                        uuid.UUID(int=1),
                        None,
                    )
                ],
            )
            if sql == "SELECT x"
            else None
        )
    )
    with MSSQLExecutor(conn) as executor:
        row = executor.execute("SELECT x").rows[0]
    assert row == [1.5, "2024-01-02 03:04:00", "00ff", str(uuid.UUID(int=1)), None]


# ------------------------------------------------------------------ control flow


def test_a_read_runs_in_a_transaction_that_is_rolled_back() -> None:
    connector = Connector(lambda sql: Rows(["n"], [(1,)]) if sql.startswith("SELECT") else None)
    executor = MSSQLExecutor(connector, timeout=2.5)
    result = executor.execute("SELECT 1 AS n")
    assert result.ok and result.rows == [[1]]
    conn = connector.last
    assert conn.sent == [*SETUP, "BEGIN TRANSACTION", "SELECT 1 AS n", mssql.rollback_sql()]
    assert conn.timeouts == [3]
    assert "<COMMIT>" not in conn.log
    executor.execute("SELECT 2")
    assert len(connector.connections) == 1 and conn.sent.count(SETUP[0]) == 1
    assert isinstance(executor, Executor)


def test_rows_are_capped_with_fetchmany() -> None:
    connector = Connector(
        lambda sql: Rows(["i"], [(i,) for i in range(50)]) if "range" in sql else None
    )
    executor = MSSQLExecutor(connector, max_rows=10)
    result = executor.execute("SELECT i FROM range")
    assert result.row_count == 10 and result.truncated and result.rows[-1] == [9]
    assert connector.last.fetch_sizes == [11]
    small = executor.execute("SELECT i FROM range", max_rows=100)
    assert small.row_count == 50 and not small.truncated


def test_default_timeouts_follow_bird_critic() -> None:
    connector = Connector(lambda sql: Rows(["n"], [(1,)]) if "SELECT" in sql else None)
    executor = MSSQLExecutor(connector)
    executor.execute("SELECT 1")
    executor.execute("WITH RECURSIVE r AS (SELECT 1 AS n) SELECT n FROM r")
    assert connector.last.timeouts == [60, 15]


def test_rollback_follows_errors_and_timeouts_drop_the_connection() -> None:
    def respond(sql: str) -> Rows | None:
        if "slow" in sql:
            raise db_error(20003, "Adaptive Server connection timed out")
        if "bad" in sql:
            raise db_error(207, "Invalid column name 'bad'.", pymssql.ProgrammingError)
        return Rows(["n"], [(1,)]) if sql.startswith("SELECT") else None

    connector = Connector(respond)
    executor = MSSQLExecutor(connector)
    failed = executor.execute("SELECT 1; SELECT bad FROM t; SELECT 3")
    assert failed.error_kind == "schema" and failed.error == "Invalid column name 'bad'."
    first = connector.last
    assert first.sent[-1] == mssql.rollback_sql() and "SELECT 3" not in first.sent
    timed = executor.execute("SELECT slow", timeout=1)
    assert timed.status == "timeout"
    assert first.sent[-1] == mssql.rollback_sql() and first.closed
    assert executor.execute("SELECT 1").ok
    assert len(connector.connections) == 2 and connector.last.sent[: len(SETUP)] == SETUP


def test_blocked_text_never_reaches_the_server() -> None:
    connector = Connector()
    executor = MSSQLExecutor(connector)
    for sql in ["DELETE FROM t", "SELECT 1; DROP TABLE t", "EXEC xp_cmdshell 'dir'", "COMMIT"]:
        result = executor.execute(sql)
        assert result.status == "blocked", sql
    assert connector.connections == []


def test_allow_writes_still_rolls_back_and_blocks_the_rest() -> None:
    connector = Connector()
    executor = MSSQLExecutor(connector, allow_writes=True)
    assert executor.execute("DELETE FROM t WHERE id = 1").ok
    assert executor.execute("CREATE TABLE x (a INT)").ok
    assert connector.last.sent[-1] == mssql.rollback_sql()
    for sql in [
        "COMMIT",
        "DROP DATABASE prod",
        "SELECT * FROM OPENQUERY(s, 'x')",
        "SET NOCOUNT OFF",
    ]:
        assert executor.execute(sql).status == "blocked", sql
    assert "<COMMIT>" not in connector.last.log


def test_unparseable_text_is_probed_on_the_server() -> None:
    def respond(sql: str) -> Rows | None:
        if "dm_exec_describe_first_result_set" in sql:
            if "SELEC " in sql:
                return Rows(
                    ["error_number", "error_message"], [(102, "Incorrect syntax near '1'.")]
                )
            return Rows(["error_number", "error_message"], [])
        return None

    connector = Connector(respond)
    executor = MSSQLExecutor(connector)
    wrong = executor.execute("SELEC 1")
    assert (wrong.status, wrong.error_kind, wrong.error_code) == ("error", "syntax", "102")
    assert "SELEC 1" not in connector.last.sent  # only inside the probe
    unknown = executor.execute("SELECT 1 SELECT 2")  # valid T-SQL, beyond the guard
    assert unknown.status == "blocked" and "cannot be checked" in (unknown.error or "")
    assert "SELECT 1 SELECT 2" not in connector.last.sent


def test_connection_failures_are_results() -> None:
    connector = Connector(fail=db_error(20009, "Unable to connect: Adaptive Server is unavailable"))
    result = MSSQLExecutor(connector).execute("SELECT 1")
    assert result.status == "error" and result.error_kind == "other"
    assert "unavailable" in (result.error or "")


def test_scratch_sends_stand_ins_as_ctes() -> None:
    connector = Connector(lambda sql: Rows(["a"], []) if "WITH" in sql else None)
    executor = MSSQLExecutor(connector)
    with executor.scratch() as session:
        assert isinstance(session, ScratchSession)
        assert session.create_stand_in("dep", ["a"]).ok
        assert not session.create_stand_in("none", []).ok
        assert session.execute("SELECT a FROM dep", max_rows=1).ok
    sent = [s for s in connector.last.sent if s.startswith("WITH")]
    assert sent == ["WITH [dep] ([a]) AS (SELECT NULL WHERE 1 = 0)\nSELECT a FROM dep"]


def test_reflect_builds_tables_from_catalog_rows() -> None:
    reflection = TSQL.reflection
    assert reflection is not None

    def respond(sql: str) -> Rows | None:
        if sql == reflection.tables:
            return Rows(
                ["s", "t", "k", "n"], [("dbo", "orders", "table", 2), ("sales", "v", "view", None)]
            )
        if sql.startswith("SELECT COUNT(*)"):
            return Rows([""], [(2,)])
        if sql == reflection.columns:
            return Rows(
                ["s", "t", "c", "d", "n", "o"],
                [
                    ("dbo", "orders", "id", "int", 0, 1),
                    ("dbo", "orders", "total", "decimal(10,2)", 1, 2),
                    ("sales", "v", "id", "int", 1, 1),
                ],
            )
        if sql == reflection.keys:
            return Rows(
                ["s"] * 9, [("dbo", "orders", "pk", "PRIMARY KEY", "id", 1, None, None, None)]
            )
        if sql.startswith("SELECT TOP 2"):
            return Rows(["id"], [(1,), (2,)])
        return None

    connector = Connector(respond)
    tables = MSSQLExecutor(connector).reflect(sample_rows=2)
    assert [t.name for t in tables] == ["orders", "sales.v"]
    orders = tables[0]
    assert orders.ddl == (
        "CREATE TABLE [orders] (\n  [id] int NOT NULL,\n  [total] decimal(10,2),\n"
        "  PRIMARY KEY ([id])\n)"
    )
    assert orders.columns[0].primary_key and orders.row_count == 2
    assert orders.sample_rows == [[1], [2]]
    sampling = [s for s in connector.last.sent if s.startswith("SELECT TOP")]
    assert sampling == ["SELECT TOP 2 * FROM [dbo].[orders]", "SELECT TOP 2 * FROM [sales].[v]"]
    for sql in sampling:
        limit = parses(sql).args["limit"]
        assert limit is not None and limit.expression.this == "2"
    sent = connector.last.sent
    assert sent.count("BEGIN TRANSACTION") == sent.count(mssql.rollback_sql()) >= 5


# ------------------------------------------------------------------ opening


def test_connect_kwargs_from_url() -> None:
    url = parse_url("mssql+pymssql://sa:p%40ss@db.local:1444/shop?tds_version=7.4&login_timeout=5")
    kwargs = mssql.connect_kwargs(url)
    assert kwargs == {
        "server": "db.local",
        "port": "1444",
        "user": "sa",
        "password": "p@ss",
        "database": "shop",
        "login_timeout": 5,
        "charset": "UTF-8",
        "appname": "acts-sql",
        "autocommit": True,
        "tds_version": "7.4",
    }
    assert mssql.connect_kwargs(parse_url("mssql://h/db"))["port"] == "1433"


def test_open_url_connects_through_pymssql(monkeypatch: pytest.MonkeyPatch) -> None:
    connector = Connector(lambda sql: Rows(["x"], [(1,)]) if sql == "SELECT 1" else None)
    seen: dict[str, object] = {}

    def fake_connect(**kwargs: object) -> object:
        seen.update(kwargs)
        return connector()

    monkeypatch.setattr(pymssql, "connect", fake_connect)
    executor = mssql.open_url(
        "mssql+pymssql://sa:pw@h/db", timeout=3, max_rows=7, allow_writes=True
    )
    assert isinstance(executor, MSSQLExecutor)
    assert (executor.timeout, executor.max_rows, executor.allow_writes) == (3, 7, True)
    assert seen["server"] == "h" and seen["database"] == "db"


def test_open_url_failure_hides_the_password(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(**_kwargs: object) -> object:
        raise db_error(18456, "Login failed for user 'sa'.")

    monkeypatch.setattr(pymssql, "connect", refuse)
    with pytest.raises(DatabaseOpenError) as info:
        mssql.open_url("mssql+pymssql://sa:secret@h/db", timeout=None, max_rows=None)
    assert "Login failed" in str(info.value) and "secret" not in str(info.value)
    with pytest.raises(DatabaseOpenError):
        mssql.open_url("oracle://u:p@h/x", timeout=None, max_rows=None)
