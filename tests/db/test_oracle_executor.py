"""The Oracle executor without a server: the SQL it sends (checked by
sqlglot's Oracle dialect), its error classification, and its control flow
over a fake DB-API connection."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import oracledb
import pytest
import sqlglot
from fake_dbapi import Connector, Rows
from oracledb import errors as ora_errors

from acts_sql.db import oracle
from acts_sql.db.dbapi_executor import stand_in_name, with_stand_ins
from acts_sql.db.oracle import OracleExecutor
from acts_sql.db.url import parse_url
from acts_sql.errors import DatabaseOpenError
from acts_sql.sql.dialects import get_dialect

ORA = get_dialect("oracle")
READ_ONLY = "SET TRANSACTION READ ONLY"


def parses(sql: str) -> sqlglot.exp.Expr:
    return sqlglot.parse_one(sql, read="oracle")


def ora_error(
    message: str, offset: int = 0, cls: type[Exception] = oracledb.DatabaseError
) -> Exception:
    """An exception shaped like python-oracledb's: args[0] is its error object."""
    return cls(ora_errors._Error(message, offset=offset))


def answer_queries(sql: str) -> Rows | None:
    return Rows(["N"], [(1,)]) if sql.lstrip().upper().startswith(("SELECT", "WITH")) else None


# ------------------------------------------------------------------ SQL it sends


def test_every_statement_it_writes_parses_as_oracle() -> None:
    for statement in [*oracle.session_setup_sql(), *oracle.begin_sql(read_only=True)]:
        parses(statement)
    assert oracle.begin_sql(read_only=True) == [READ_ONLY]
    assert oracle.begin_sql(read_only=False) == []
    reflection = ORA.reflection
    assert reflection is not None
    for query in (reflection.tables, reflection.columns, reflection.keys):
        assert isinstance(parses(query), sqlglot.exp.Query)


def test_stand_ins_are_ctes_over_dual_with_foldable_names() -> None:
    sql = with_stand_ins("SELECT id FROM dep", {"dep": ["id", "Mixed Case", "level"]}, ORA)
    assert sql.startswith(
        'WITH dep (id, "Mixed Case", "level") AS (SELECT NULL, NULL, NULL FROM dual WHERE 1 = 0)'
    )
    assert [cte.alias for cte in parses(sql).find_all(sqlglot.exp.CTE)] == ["dep"]
    assert stand_in_name("dep", ORA) == "dep"
    assert stand_in_name("dep", get_dialect("sqlserver")) == "[dep]"


@pytest.mark.parametrize(
    ("statement", "sent"),
    [
        ("SELECT 1 FROM dual;", "SELECT 1 FROM dual"),
        ("SELECT 1 FROM dual ; \n", "SELECT 1 FROM dual"),
        ("BEGIN NULL; END;", "BEGIN NULL; END;"),
        ("BEGIN x(1); END my_block;", "BEGIN x(1); END my_block;"),
    ],
)
def test_statement_text_drops_the_trailing_semicolon(statement: str, sent: str) -> None:
    assert oracle.statement_text(statement) == sent


@pytest.mark.parametrize(("seconds", "ms"), [(0.0001, 1), (1.5, 1500), (60, 60000)])
def test_call_timeout_is_milliseconds(seconds: float, ms: int) -> None:
    assert oracle.call_timeout_ms(seconds) == ms


@pytest.mark.parametrize(
    ("statement", "safe"),
    [
        ("SELECT * FRM t", True),
        ("  -- c\n with x as (select 1) selec", True),
        ("CREATE TABLE x (a INT)", False),
        ("DROP TABLE t", False),
        ("BEGIN NULL; END;", False),
    ],
)
def test_only_queries_are_parsed_on_the_server(statement: str, safe: bool) -> None:
    assert oracle.safe_to_parse(statement) is safe


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("ORA-00900: invalid SQL statement", "syntax"),
        ("ORA-00923: FROM keyword not found where expected", "syntax"),
        ("ORA-00936: missing expression", "syntax"),
        ("ORA-01756: quoted string not properly terminated", "syntax"),
        ('ORA-00904: "NOPE": invalid identifier', "schema"),
        ("ORA-00942: table or view does not exist", "schema"),
        ("ORA-00918: column ambiguously defined", "schema"),
        ("ORA-01722: invalid number", "type"),
        ("ORA-00932: inconsistent datatypes: expected NUMBER got DATE", "type"),
        ("ORA-01861: literal does not match format string", "type"),
        ("ORA-00979: not a GROUP BY expression", "runtime"),
        ("ORA-01476: divisor is equal to zero", "runtime"),
        ("DPY-6005: cannot connect to database", "other"),
        ("ORA-01017: invalid username/password; logon denied", "other"),
    ],
)
def test_error_codes_map_to_kinds(message: str, kind: str) -> None:
    result = oracle.classify(ora_error(message), timeout=5)
    assert (result.status, result.error_kind) == ("error", kind)
    assert result.error_code == message.split(":")[0] and result.error == message


def test_parse_error_offset_becomes_a_position() -> None:
    result = oracle.classify(
        ora_error('ORA-00904: "NOPE": invalid identifier', offset=7), timeout=5
    )
    assert result.error_position == 8
    assert (
        oracle.classify(ora_error("ORA-01476: divisor is equal to zero"), timeout=5).error_position
        is None
    )


def test_code_is_read_from_the_message_when_the_object_has_none() -> None:
    code, message, offset = oracle.error_parts(
        RuntimeError("ORA-00942: table or view does not exist")
    )
    assert (code, offset) == ("ORA-00942", None) and message.startswith("ORA-00942")


@pytest.mark.parametrize(
    "message",
    [
        "DPY-4024: call timeout of 1000 ms exceeded",
        "DPI-1067: call timeout of 1000 ms exceeded with ORA-3156",
    ],
)
def test_call_timeouts(message: str) -> None:
    result = oracle.classify(ora_error(message, cls=oracledb.OperationalError), timeout=1)
    assert result.status == "timeout" and result.error == "timeout: statement exceeded 1 s"


def test_read_only_violations_are_blocked() -> None:
    message = (
        "ORA-01456: may not perform insert/delete/update operation inside a READ ONLY transaction"
    )
    result = oracle.classify(ora_error(message), timeout=1)
    assert result.status == "blocked" and result.error_code == "ORA-01456"


class FakeLob:
    def __init__(self, text: str) -> None:
        self.text = text

    def read(self, offset: int = 1, amount: int | None = None) -> str:
        return self.text[offset - 1 : (offset - 1 + amount) if amount else None]


def test_cells_read_lobs_and_are_json_safe() -> None:
    assert oracle.to_cell(FakeLob("x" * 70_000)) == "x" * oracle.MAX_LOB_CHARS
    assert oracle.to_cell(Decimal("2.50")) == 2.5
    assert oracle.to_cell(dt.datetime(2024, 5, 6)) == "2024-05-06 00:00:00"
    assert oracle.to_cell(dt.timedelta(days=1, seconds=5)) == "1 day 00:00:05"
    assert oracle.to_cell(b"\x01") == "01"


# ------------------------------------------------------------------ control flow


def test_reads_run_in_a_read_only_transaction_that_is_rolled_back() -> None:
    connector = Connector(answer_queries)
    executor = OracleExecutor(connector, timeout=1.5)
    result = executor.execute("SELECT 1 AS n FROM dual;")
    assert result.ok and result.rows == [[1]]
    conn = connector.last
    assert conn.log == [READ_ONLY, "SELECT 1 AS n FROM dual", "<rollback>"]
    assert conn.timeouts == [1500]


def test_several_statements_share_the_transaction_and_stop_at_a_failure() -> None:
    def respond(sql: str) -> Rows | None:
        if "nope" in sql:
            raise ora_error('ORA-00904: "NOPE": invalid identifier', offset=7)
        return answer_queries(sql)

    connector = Connector(respond)
    sql = "SELECT 1 FROM dual;\nSELECT nope FROM dual;\nSELECT 3 FROM dual"
    result = OracleExecutor(connector).execute(sql)
    assert result.error_kind == "schema" and result.error_code == "ORA-00904"
    assert result.error_position is not None
    assert sql[result.error_position - 1 :].startswith("nope")
    assert connector.last.log == [
        READ_ONLY,
        "SELECT 1 FROM dual",
        "SELECT nope FROM dual",
        "<rollback>",
    ]


def test_rows_are_capped_with_fetchmany() -> None:
    connector = Connector(
        lambda sql: Rows(["I"], [(i,) for i in range(50_000)]) if "SELECT" in sql else None
    )
    result = OracleExecutor(connector).execute("SELECT i FROM big")
    assert result.row_count == 10_000 and result.truncated
    assert connector.last.fetch_sizes == [10_001]


def test_a_timeout_rolls_back_and_reconnects() -> None:
    def respond(sql: str) -> Rows | None:
        if "slow" in sql:
            raise ora_error(
                "DPY-4024: call timeout of 1000 ms exceeded", cls=oracledb.OperationalError
            )
        return answer_queries(sql)

    connector = Connector(respond)
    executor = OracleExecutor(connector)
    assert executor.execute("SELECT slow FROM dual", timeout=1).status == "timeout"
    first = connector.last
    assert first.log[-2:] == ["<rollback>", "<close>"]
    assert executor.execute("SELECT 1 FROM dual").ok
    assert len(connector.connections) == 2


def test_blocked_text_never_reaches_the_server() -> None:
    connector = Connector(answer_queries)
    executor = OracleExecutor(connector)
    for sql in [
        "DELETE FROM t",
        "SELECT s.NEXTVAL FROM dual",
        "SELECT * FROM t FOR UPDATE",
        "SELECT UTL_HTTP.REQUEST('http://x') FROM dual",
        "ALTER SESSION SET x = 1",
        "EXPLAIN PLAN FOR SELECT 1 FROM dual",
        "COMMIT",
    ]:
        assert executor.execute(sql).status == "blocked", sql
    assert connector.connections == []


def test_allow_writes_permits_dml_but_never_ddl() -> None:
    connector = Connector(answer_queries)
    executor = OracleExecutor(connector, allow_writes=True)
    assert executor.execute("DELETE FROM t WHERE id = 1").ok
    assert connector.last.log == ["DELETE FROM t WHERE id = 1", "<rollback>"]
    ddl = executor.execute("DROP TABLE t")
    assert ddl.status == "blocked" and ddl.error == "blocked: writes are not allowed: DROP TABLE"
    assert executor.execute("COMMIT").status == "blocked"
    assert "<COMMIT>" not in connector.last.log


def test_unparseable_queries_are_parsed_not_run() -> None:
    def respond(sql: str) -> Rows | None:
        if "FRM" in sql:
            raise ora_error("ORA-00923: FROM keyword not found where expected", offset=9)
        return answer_queries(sql)

    connector = Connector(respond)
    executor = OracleExecutor(connector)
    wrong = executor.execute("SELECT 1 FRM dual")
    assert (wrong.status, wrong.error_kind, wrong.error_position) == ("error", "syntax", 10)
    assert connector.last.parsed == ["SELECT 1 FRM dual"] and connector.last.sent == []
    plsql = executor.execute("BEGIN DBMS_SCHEDULER.RUN_JOB('x'); END;")
    assert plsql.status == "blocked" and connector.last.parsed == ["SELECT 1 FRM dual"]


def test_scratch_sends_stand_ins_as_ctes() -> None:
    connector = Connector(answer_queries)
    with OracleExecutor(connector).scratch() as session:
        session.create_stand_in("dep", ["a"])
        assert session.execute("SELECT a FROM dep;").ok
    assert connector.last.sent == [
        READ_ONLY,
        "WITH dep (a) AS (SELECT NULL FROM dual WHERE 1 = 0)\nSELECT a FROM dep",
    ]


def test_reflect_samples_with_fetch_first() -> None:
    reflection = ORA.reflection
    assert reflection is not None

    def respond(sql: str) -> Rows | None:
        if sql == reflection.tables:
            return Rows(["S", "T", "K", "N"], [("SHOP", "ORDERS", "table", 7)])
        if sql == reflection.columns:
            return Rows(["S"] * 6, [("SHOP", "ORDERS", "ID", "NUMBER(10,0)", 0, 1)])
        if sql == reflection.keys:
            return Rows(["S"] * 9, [])
        if sql.startswith("SELECT COUNT(*)"):
            return Rows(["N"], [(7,)])
        return Rows(["ID"], [(1,)]) if "FETCH FIRST 3 ROWS ONLY" in sql else None

    connector = Connector(respond)
    (orders,) = OracleExecutor(connector).reflect(sample_rows=3)
    assert (orders.name, orders.row_count, orders.sample_rows) == ("ORDERS", 7, [[1]])
    assert orders.ddl == 'CREATE TABLE "ORDERS" (\n  "ID" NUMBER(10,0) NOT NULL\n)'
    sampling = [s for s in connector.last.sent if "FETCH FIRST" in s]
    assert sampling == ['SELECT * FROM "ORDERS" FETCH FIRST 3 ROWS ONLY']
    assert parses(sampling[0]).args["limit"] is not None
    reads = connector.last.log.count(READ_ONLY)
    assert reads == connector.last.log.count("<rollback>") == len(connector.last.sent) // 2


# ------------------------------------------------------------------ opening


def test_connect_kwargs_from_url() -> None:
    kwargs = oracle.connect_kwargs(parse_url("oracle+oracledb://scott:t%21ger@db:1522/FREEPDB1"))
    assert kwargs == {
        "user": "scott",
        "password": "t!ger",
        "host": "db",
        "port": 1522,
        "tcp_connect_timeout": 15.0,
        "service_name": "FREEPDB1",
    }
    sid = oracle.connect_kwargs(parse_url("oracle://u:p@db/?sid=ORCL"))
    assert sid["sid"] == "ORCL" and "service_name" not in sid and sid["port"] == 1521


def test_open_url_connects_through_oracledb(monkeypatch: pytest.MonkeyPatch) -> None:
    connector = Connector(answer_queries)
    monkeypatch.setattr(oracledb, "connect", lambda **_kw: connector())
    executor = oracle.open_url("oracle://u:p@db/XE", timeout=2, max_rows=3)
    assert isinstance(executor, OracleExecutor) and executor.max_rows == 3
    assert connector.last.log == [READ_ONLY, "SELECT 1 FROM dual", "<rollback>"]

    def refuse(**_kw: object) -> object:
        raise ora_error("ORA-01017: invalid username/password; logon denied")

    monkeypatch.setattr(oracledb, "connect", refuse)
    with pytest.raises(DatabaseOpenError, match="ORA-01017") as info:
        oracle.open_url("oracle://u:hunter2@db/XE", timeout=None, max_rows=None)
    assert "hunter2" not in str(info.value)
