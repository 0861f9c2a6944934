"""The read-only guard's rules, reasons, categories and permits."""

from __future__ import annotations

import inspect

import pytest
from sqlglot import exp

from acts_sql.sql.dialects import get_dialect
from acts_sql.sql.safety import (
    PERMIT_IN_ROLLBACK,
    PERMIT_IN_ROLLBACK_NO_DDL,
    PERMIT_ON_COPY,
    SafetyVerdict,
    check_statement,
)
from acts_sql.sql.safety_rules import NODE_RULES, Context, Finding, judge_nodes
from acts_sql.sql.safety_rules.tables import (
    READ_ROOTS,
    REASON_PREFIX,
    STATEMENT_KINDS,
    STATEMENT_PARTS,
)


def blocked(sql: str, dialect: str = "postgresql") -> SafetyVerdict:
    verdict = check_statement(sql, dialect)
    assert not verdict.allowed, sql
    return verdict


@pytest.mark.parametrize(
    ("sql", "reason"),
    [
        (
            "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d",
            "writes are not allowed: DELETE inside a CTE",
        ),
        ("SELECT * INTO x FROM t", "writes are not allowed: SELECT ... INTO"),
        ("SELECT 1; DROP TABLE t", "writes are not allowed: DROP TABLE in statement 2 of 2"),
        (
            "SELECT * FROM t WHERE a IN (SELECT a FROM u FOR UPDATE)",
            "taking locks is not allowed: SELECT ... FOR UPDATE inside a subquery",
        ),
        ("EXPLAIN ANALYZE DELETE FROM t", "writes are not allowed: DELETE in EXPLAIN"),
        ("DROP DATABASE prod", "server administration is not allowed: DROP DATABASE"),
        ("SELECT pg_read_file('x')", "file and environment access is not allowed: pg_read_file()"),
        (
            "COMMIT",
            "transaction control is not allowed (the executor manages transactions): COMMIT",
        ),
        ("", "no SQL statement"),
        ("-- only a comment", "no SQL statement"),
    ],
)
def test_reasons_name_what_and_where(sql: str, reason: str) -> None:
    assert blocked(sql).reason == reason


@pytest.mark.parametrize(
    ("dialect", "sql", "category"),
    [
        ("postgresql", "UPDATE t SET a = 1", "write"),
        ("postgresql", "CREATE INDEX i ON t (a)", "ddl"),
        ("postgresql", "GRANT ALL ON t TO x", "dcl"),
        ("postgresql", "VACUUM", "admin"),
        ("postgresql", "CHECKPOINT", "admin"),  # unparsed, named by its keyword
        ("postgresql", "START TRANSACTION", "transaction"),
        ("postgresql", "SET work_mem = '1GB'", "session"),
        ("postgresql", "CALL p()", "procedure"),
        ("postgresql", "COPY t FROM '/x'", "file"),
        ("postgresql", "SELECT dblink_exec('x', 'y')", "network"),
        ("postgresql", "CREATE EXTENSION plpython3u", "extension"),
        ("postgresql", "SELECT pg_try_advisory_lock(1)", "lock"),
        ("postgresql", "SELECT nextval('s')", "sequence"),
        ("mysql", "SELECT 1 /*! , SLEEP(9) */", "hidden"),
        ("postgresql", "SELEC 1", "unparseable"),
        ("mysql", "SELECT * FROM t INTO OUTFILE '/x'", "unparseable"),
        ("postgresql", "", "empty"),
        ("sqlite", "PRAGMA journal_mode = OFF", "session"),
        ("sqlserver", "SELECT * FROM t WITH (XLOCK)", "lock"),
        ("oracle", "SELECT DBMS_SCHEDULER.RUN_JOB('j') FROM dual", "procedure"),
        ("oracle", "SELECT UTL_FILE.FOPEN('d', 'f', 'r') FROM dual", "file"),
        ("duckdb", "SELECT * FROM 'dir/file.parquet'", "file"),
        ("sqlserver", "SELECT NEXT VALUE FOR dbo.s", "sequence"),
    ],
)
def test_categories(dialect: str, sql: str, category: str) -> None:
    assert blocked(sql, dialect).category == category


def test_reason_prefix_for_every_category() -> None:
    verdict = blocked("SET x = 1")
    assert verdict.reason is not None
    assert verdict.reason.startswith(REASON_PREFIX["session"])


def test_unparseable_keeps_its_category_name_and_the_parser_message() -> None:
    verdict = blocked("SELECT * FROM WHERE", "postgresql")
    assert verdict.category == "unparseable"
    assert verdict.reason is not None and verdict.reason.startswith("cannot be checked: ")
    assert "line 1" in verdict.reason


@pytest.mark.parametrize(
    ("dialect", "sql"),
    [
        ("sqlite", "SELECT glob('a*', name) FROM t"),  # a string function in SQLite
        ("postgresql", "SELECT 1 /*! not special outside MySQL */"),
        ("postgresql", "SELECT query FROM pg_stat_activity"),
        ("duckdb", 'SELECT * FROM "plain_table"'),
        ("postgresql", "SELECT s.nextval FROM s"),  # a column in PostgreSQL
        ("oracle", "SELECT DBMS_METADATA.GET_DDL('TABLE', 'T') FROM dual"),
        ("mysql", "SELECT /*+ NO_INDEX(t) */ * FROM t"),
        ("sqlite", "PRAGMA index_list(t)"),
        ("duckdb", "PRAGMA show_tables"),
        ("mysql", "SHOW PROCESSLIST"),
        ("postgresql", "EXPLAIN (FORMAT JSON) SELECT 1"),
    ],
)
def test_dialect_scoped_rules_leave_other_dialects_alone(dialect: str, sql: str) -> None:
    assert check_statement(sql, dialect).allowed


# ---------------------------------------------------------------- permits


def test_permit_on_copy_lets_writes_through_but_nothing_else() -> None:
    def ok(sql: str) -> bool:
        return check_statement(sql, "postgresql", permit=PERMIT_ON_COPY).allowed

    assert ok("DELETE FROM t")
    assert ok("WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d")
    assert ok("CREATE TABLE x AS SELECT * FROM t; DROP TABLE t")
    assert ok("SELECT nextval('s')")
    assert not ok("DELETE FROM t; COMMIT")
    assert not ok("COPY t TO '/tmp/x'")
    assert not ok("INSERT INTO t SELECT pg_read_file('/etc/passwd')")
    assert not ok("DROP DATABASE prod")
    assert not ok("CREATE ROLE x")
    assert not ok("GRANT SELECT ON t TO x")
    assert not ok("SET search_path = x")
    assert not ok("DELET FROM t")


def test_rollback_permits_follow_the_engine() -> None:
    assert check_statement("DROP TABLE t", "sqlserver", permit=PERMIT_IN_ROLLBACK).allowed
    no_ddl = check_statement("DROP TABLE t", "oracle", permit=PERMIT_IN_ROLLBACK_NO_DDL)
    assert not no_ddl.allowed and no_ddl.category == "ddl"
    assert check_statement("DELETE FROM t", "oracle", permit=PERMIT_IN_ROLLBACK_NO_DDL).allowed
    seq = check_statement("SELECT nextval('s')", "postgresql", permit=PERMIT_IN_ROLLBACK)
    assert seq.category == "sequence"


@pytest.mark.parametrize("category", ["transaction", "unparseable", "unknown", "file", "hidden"])
def test_categories_that_can_never_be_permitted(category: str) -> None:
    with pytest.raises(ValueError, match=category):
        check_statement("SELECT 1", "sqlite", permit=[category])  # type: ignore[list-item]


# ---------------------------------------------------------------- fail closed


def _statement_classes() -> list[type[exp.Expr]]:
    modules = ("sqlglot.expressions.ddl", "sqlglot.expressions.dml")
    return [
        cls
        for cls in vars(exp).values()
        if inspect.isclass(cls) and issubclass(cls, exp.Expr) and cls.__module__ in modules
    ]


def test_every_sqlglot_statement_class_is_classified() -> None:
    """Documents sqlglot 30's statement classes; a new one is blocked as unknown."""
    known = set(STATEMENT_KINDS) | STATEMENT_PARTS | READ_ROOTS
    missing = sorted(c.__name__ for c in _statement_classes() if c.__name__ not in known)
    assert missing == []


class Frobnicate(exp.Expression):
    """A statement class a future sqlglot might add."""


Frobnicate.__module__ = "sqlglot.expressions.ddl"


def test_an_unknown_statement_class_anywhere_is_blocked() -> None:
    tree = exp.select("a").from_("t").where(exp.EQ(this=exp.column("a"), expression=Frobnicate()))
    ctx = Context(dialect=get_dialect("postgresql"), check_text=lambda _text: [])
    found = judge_nodes(tree, ctx)
    assert found == [Finding("unknown", "FROBNICATE")]


def test_a_command_inside_a_query_is_blocked() -> None:
    tree = exp.select("a").from_(exp.Subquery(this=exp.Command(this="VACUUM")))
    ctx = Context(dialect=get_dialect("postgresql"), check_text=lambda _text: [])
    assert [f.category for f in judge_nodes(tree, ctx)] == ["admin"]


def test_node_rules_are_small_documented_functions() -> None:
    for rule in NODE_RULES:
        assert rule.__doc__, rule.__name__
        assert len(inspect.getsource(rule).splitlines()) <= 25, rule.__name__


def test_explain_is_judged_by_what_it_explains() -> None:
    assert check_statement("EXPLAIN SELECT * FROM t", "duckdb").allowed
    assert check_statement("EXPLAIN ANALYZE SELECT * FROM t", "postgresql").allowed
    assert blocked("EXPLAIN SELECT * FROM t FOR UPDATE").category == "lock"
    assert blocked("EXPLAIN DROP TABLE t").category == "ddl"
    assert blocked("EXPLAIN").category == "unknown"
    assert blocked("EXPLAIN PLAN FOR SELECT 1 FROM dual", "oracle").category == "write"
