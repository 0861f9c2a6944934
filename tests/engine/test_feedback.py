"""The rejection feedback a new generate_sql step gets: whole lines, newest kept, bounded."""

from __future__ import annotations

import pytest

from acts_sql.engine.feedback import FEEDBACK_CHARS, rejection_feedback

LONG_SQL = "SELECT " + ", ".join(f"col_{i}" for i in range(400)) + " FROM wide_table"


def test_nothing_rejected_is_no_feedback() -> None:
    assert rejection_feedback([]) == ""


def test_each_rejection_is_one_line_oldest_first() -> None:
    text = rejection_feedback([("SELECT a\n  FROM t", "wrong rows"), ("SELECT b FROM t", "error")])
    assert text.splitlines() == [
        "Rejected: SELECT a FROM t -- wrong rows",
        "Rejected: SELECT b FROM t -- error",
    ]


@pytest.mark.parametrize("limit", [120, 300, FEEDBACK_CHARS])
def test_older_lines_are_dropped_whole_and_counted(limit: int) -> None:
    sqls = [f"SELECT {i} AS n, name FROM customers WHERE id = {i}" for i in range(60)]
    rejected = [(sql, "wrong") for sql in sqls]
    text = rejection_feedback(rejected, limit)
    lines = text.splitlines()
    assert len(text) <= limit
    assert lines[-1] == "Rejected: SELECT 59 AS n, name FROM customers WHERE id = 59 -- wrong"
    assert lines[0].startswith("(") and lines[0].endswith("not shown)")
    shown = lines[1:]
    assert all(line.startswith("Rejected: SELECT ") for line in shown)
    assert all(line.endswith(" -- wrong") for line in shown)
    assert lines[0] == f"({60 - len(shown)} earlier rejected candidate(s) not shown)"


def test_a_newest_line_too_long_keeps_its_reason_and_both_ends_of_its_sql() -> None:
    text = rejection_feedback([("SELECT 1", "old"), (LONG_SQL, "no such column: col_7x")], 400)
    assert len(text) <= 400
    assert text.startswith("Rejected: SELECT col_0, col_1")
    assert " ... " in text and text.endswith("FROM wide_table -- no such column: col_7x")


def test_a_huge_reason_is_capped_so_the_sql_still_shows() -> None:
    text = rejection_feedback([(LONG_SQL, "x" * 5000)], 300)
    assert len(text) <= 300
    assert "SELECT col_0" in text and "wide_table" in text and text.endswith("...")
