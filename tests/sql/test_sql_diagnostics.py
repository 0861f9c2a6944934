"""Syntax diagnostics with positions, parsing into trees, splitting into statements."""

from __future__ import annotations

import pytest
from sqlglot import exp

from acts_sql.errors import SqlParseError
from acts_sql.sql.diagnostics import (
    SqlDiagnostic,
    parse_statements,
    syntax_diagnostics,
)
from acts_sql.sql.query_text import split_statements

# (sql, dialect, [(line, column, near, words in the message), ...])
BROKEN = [
    ("SELECT a,\nFROM t WHERE", "sqlite", [(2, 8, "WHERE", "missing for Where")]),
    (
        "SELEC name FROM users",
        "sqlite",
        [(1, 1, "SELEC", "not a statement keyword"), (1, 12, "FROM", "Unexpected token")],
    ),
    ("SELECT 'abc FROM t", "postgresql", [(1, 8, "'abc FROM t", "unterminated string")]),
    ('SELECT "abc FROM t', "postgresql", [(1, 8, '"abc FROM t', "unterminated quoted identifier")]),
    ("SELECT 1 /* never closed", "sqlite", [(1, 10, "/* never closed", "unterminated comment")]),
    ("SELECT 1;\nSELECT (1", "sqlite", [(2, 9, "1", "Expecting )")]),
    ("SELECT a\nFROM t\nWHERE a = 'x' AND", "mysql", [(3, 15, "AND", "missing for And")]),
    ("SELECT FROM", "sqlite", [(1, 8, "FROM", "Expected table name but got end of input")]),
    ("SELECT TOP FROM t", "sqlserver", [(1, 12, "FROM", "missing for Limit")]),
    ("FOO BAR", "duckdb", [(1, 1, "FOO", "not a statement keyword")]),
    ("1 + 1", "oracle", [(1, 1, "1", "not a SQL statement")]),
    (
        "SELECT 1; SELEC x FROM t; SELECT (1",  # every broken statement is reported
        "sqlite",
        [
            (1, 11, "SELEC", "not a statement keyword"),
            (1, 19, "FROM", "Unexpected token"),
            (1, 35, "1", "Expecting )"),
        ],
    ),
]


@pytest.mark.parametrize(("sql", "dialect", "expected"), BROKEN)
def test_broken_sql_gets_positioned_diagnostics(
    sql: str, dialect: str, expected: list[tuple[int, int, str, str]]
) -> None:
    found = syntax_diagnostics(sql, dialect)
    assert [(d.line, d.column, d.near) for d in found] == [e[:3] for e in expected]
    for diagnostic, (*_, words) in zip(found, expected, strict=True):
        assert words in diagnostic.message
        assert "<" not in diagnostic.message  # no Python reprs leak into messages


VALID = [
    ("SELECT a, b FROM t WHERE a > 1 ORDER BY b", "sqlite"),
    ("SELECT [a b], `c` FROM t", "sqlite"),
    ("PRAGMA table_info(t)", "sqlite"),
    ("SELECT 1::int, $$a;b$$", "postgresql"),
    ("VALUES (1), (2)", "postgresql"),
    ("SELECT `a` FROM t LIMIT 1; # a comment", "mysql"),
    ("SELECT TOP 5 [name] FROM t", "sqlserver"),
    ("SELECT name FROM t FETCH FIRST 5 ROWS ONLY", "oracle"),
    ("SELECT * FROM t QUALIFY ROW_NUMBER() OVER () = 1", "duckdb"),
    ("", "sqlite"),
    ("  ;  -- nothing", "sqlite"),
]


@pytest.mark.parametrize(("sql", "dialect"), VALID)
def test_valid_sql_has_no_diagnostics(sql: str, dialect: str) -> None:
    assert syntax_diagnostics(sql, dialect) == []


def test_diagnostic_describes_itself_on_one_line() -> None:
    diagnostic = SqlDiagnostic(message="Expecting )", line=2, column=9, near="1")
    assert diagnostic.describe() == "line 2, column 9: Expecting ) (near '1')"
    assert SqlDiagnostic(message="syntax error").describe() == "syntax error"


def test_parse_statements_returns_one_tree_per_statement() -> None:
    trees = parse_statements("SELECT 1;; UPDATE t SET a = 1; -- done", "postgresql")
    assert [type(tree) for tree in trees] == [exp.Select, exp.Update]
    assert parse_statements("", "sqlite") == []


def test_parse_statements_raises_with_position_and_dialect() -> None:
    with pytest.raises(SqlParseError) as caught:
        parse_statements("SELECT a\nFROM t WHERE", "pg")
    details = caught.value.details
    assert (details["line"], details["column"], details["near"]) == (2, 8, "WHERE")
    assert details["dialect"] == "postgresql"
    assert details["diagnostics"][0]["line"] == 2
    assert "line 2, column 8" in caught.value.message
    assert "PostgreSQL" in caught.value.message


# (sql, dialect, expected statements)
SPLITS = [
    ("SELECT 1; SELECT 2;", "sqlite", ["SELECT 1", "SELECT 2"]),
    ("SELECT 'a;b'; SELECT \"c;d\" -- e;f\n;", "sqlite", ["SELECT 'a;b'", 'SELECT "c;d"']),
    ("-- lead\nSELECT 1 /* ; */ + 1 ; ; /* tail */", "sqlite", ["SELECT 1 /* ; */ + 1"]),
    ("SELECT $$a;b$$; SELECT $t$;$t$", "postgresql", ["SELECT $$a;b$$", "SELECT $t$;$t$"]),
    ("SELECT 'it\\'s;'; SELECT 2 # c;", "mysql", ["SELECT 'it\\'s;'", "SELECT 2"]),
    # BEGIN ... END bodies and CASE ... END keep their semicolons
    (
        "CREATE TRIGGER tr AFTER INSERT ON t BEGIN UPDATE u SET n = n + 1; "
        "DELETE FROM v; END; SELECT 1",
        "sqlite",
        [
            "CREATE TRIGGER tr AFTER INSERT ON t BEGIN UPDATE u SET n = n + 1; DELETE FROM v; END",
            "SELECT 1",
        ],
    ),
    (
        "CREATE PROCEDURE p() BEGIN DECLARE x INT; IF x > 1 THEN SET x = 1; END IF; END; CALL p()",
        "mysql",
        [
            "CREATE PROCEDURE p() BEGIN DECLARE x INT; IF x > 1 THEN SET x = 1; END IF; END",
            "CALL p()",
        ],
    ),
    # BEGIN of a transaction is a statement of its own
    ("BEGIN; UPDATE t SET a = 1; COMMIT;", "postgresql", ["BEGIN", "UPDATE t SET a = 1", "COMMIT"]),
    (
        "BEGIN TRANSACTION; DELETE FROM t; COMMIT",
        "sqlite",
        ["BEGIN TRANSACTION", "DELETE FROM t", "COMMIT"],
    ),
    # a T-SQL routine without BEGIN takes the rest of the batch; with BEGIN ... END it does not
    (
        "CREATE PROCEDURE p AS SELECT 1; SELECT 2",
        "sqlserver",
        ["CREATE PROCEDURE p AS SELECT 1; SELECT 2"],
    ),
    (
        "CREATE PROCEDURE p @a AS INT AS BEGIN SELECT @a; END; EXEC p 1",
        "sqlserver",
        ["CREATE PROCEDURE p @a AS INT AS BEGIN SELECT @a; END", "EXEC p 1"],
    ),
    # PL/SQL declarations come before BEGIN
    (
        "DECLARE x NUMBER; BEGIN x := 1; END; SELECT 1 FROM dual",
        "oracle",
        ["DECLARE x NUMBER; BEGIN x := 1; END", "SELECT 1 FROM dual"],
    ),
    (
        "CREATE OR REPLACE FUNCTION f RETURN NUMBER IS v NUMBER; BEGIN RETURN 1; END; "
        "SELECT f FROM dual",
        "oracle",
        [
            "CREATE OR REPLACE FUNCTION f RETURN NUMBER IS v NUMBER; BEGIN RETURN 1; END",
            "SELECT f FROM dual",
        ],
    ),
    # text sqlglot cannot tokenize falls back to a quote-aware split
    ("SELECT 'x;y'; SELECT 'open;", "sqlite", ["SELECT 'x;y'", "SELECT 'open;"]),
    ('SELECT "a;b" -- c;\n; /* d; */ SELECT \'e', "postgresql", ['SELECT "a;b"', "SELECT 'e"]),
    ("SELECT $$;$$; SELECT 'e", "postgresql", ["SELECT $$;$$", "SELECT 'e"]),
    ("SELECT 'a\\';b'; SELECT 'e", "mysql", ["SELECT 'a\\';b'", "SELECT 'e"]),
]


@pytest.mark.parametrize(("sql", "dialect", "expected"), SPLITS)
def test_split_statements(sql: str, dialect: str, expected: list[str]) -> None:
    assert split_statements(sql, dialect) == expected


def test_split_of_nothing_is_empty() -> None:
    assert split_statements("  ; -- just a comment\n;", "sqlite") == []
