"""Statement splitting without a parser."""

from __future__ import annotations

from acts_sql.db.statements import has_code, is_recursive, split_statements


def test_split_plain() -> None:
    assert split_statements("SELECT 1; SELECT 2") == ["SELECT 1;", "SELECT 2"]


def test_split_keeps_quoted_semicolons() -> None:
    sql = "SELECT 'a;b'; SELECT \"c;d\" FROM t; SELECT [e;f] FROM `g;h`"
    assert split_statements(sql) == ["SELECT 'a;b';", 'SELECT "c;d" FROM t;', sql.split("; ", 2)[2]]


def test_split_ignores_comments_and_empties() -> None:
    sql = "-- lead; in comment\nSELECT 1 /* ; */;;  ; -- trailing; comment\n"
    assert split_statements(sql) == ["-- lead; in comment\nSELECT 1 /* ; */;"]


def test_split_keeps_trigger_bodies() -> None:
    sql = "CREATE TEMP TRIGGER t AFTER INSERT ON x BEGIN SELECT 1; SELECT 2; END; SELECT 3"
    assert split_statements(sql) == [sql[: sql.index("END;") + 4], "SELECT 3"]


def test_has_code_and_recursive() -> None:
    assert not has_code("  -- c\n /* d */ ;")
    assert has_code("/* d */ SELECT 1")
    assert is_recursive("/* x */ WITH RECURSIVE r AS (SELECT 1) SELECT * FROM r")
    assert not is_recursive("WITH r AS (SELECT 1) SELECT * FROM r")
