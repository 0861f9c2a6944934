"""The SQLite evaluator's helper functions, bound to one task's database file.

They differ from the PostgreSQL/MySQL ones in ways that change verdicts:
``remove_distinct`` splits on single spaces (so ``DISTINCT(x)`` survives),
``preprocess_results`` rounds numbers to 2 decimals and writes dict/list
cells as JSON, ``ex_base`` compares ordered lists when
``conditions["order"]`` is true, and ``remove_round`` / ``remove_comments``
exist. Statements starting with SELECT or WITH are fetched without a commit;
every other statement is committed. The official evaluator has no statement
time limit for SQLite; this one adds the common 60 s (15 s for WITH
RECURSIVE) through a progress handler, reported as a timeout.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
import time
from datetime import date, datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from acts_sql.bench.helpers.common import (
    MAX_ROWS,
    ExecOutcome,
    check_sql_function_usage,
    counts_as_missing,
    statement_timeout_s,
)
from acts_sql.bench.helpers.sqlite_clock import FixedClock

TEST_PREFIX = "import datetime\nfrom datetime import date\n"
TEST_CALL = "\n__test_case_result__ = test_case(pred_sqls, sol_sqls, db_path, conn, **kwargs)"
BUSY_TIMEOUT_S = 30
_PROGRESS_STEPS = 10_000
_TIMEOUT_WORDS = ("database is locked", "timeout", "complex query skipped")
_ROUND_CALL = re.compile(r"ROUND\s*\(", re.IGNORECASE)
_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_LINE_COMMENT = re.compile(r"--.*?(\r\n|\r|\n)")
_BLANK_LINES = re.compile(r"\n\s*\n+")

DEFAULT_TEST_CASE = """
def test_case(pred_sqls, sol_sqls, db_path, conn, conditions):
    pred_sqls = remove_comments(pred_sqls)
    sol_sqls = remove_comments(sol_sqls)
    pred_sqls = remove_distinct(pred_sqls)
    pred_sqls = remove_round(pred_sqls)
    sol_sqls = remove_distinct(sol_sqls)
    sol_sqls = remove_round(sol_sqls)
    result = ex_base(pred_sqls, sol_sqls, db_path, conn, conditions)
    assert result == 1, f"ex_base returned {result} but expected 1."
    return result
"""
"""The test used when a task has none (the official default, same steps)."""


# -- pure helpers -------------------------------------------------------------------------


def round_cell(item: Any, places: int = 2) -> Any:
    """Decimals and floats rounded to ``places``, inside lists, tuples and dicts too."""
    if isinstance(item, Decimal):
        return item.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    if isinstance(item, float):
        return round(item, places)
    if isinstance(item, list | tuple):
        return type(item)(round_cell(x, places) for x in item)
    if isinstance(item, dict):
        return {k: round_cell(v, places) for k, v in item.items()}
    return item


def preprocess_results(results: Any, decimal_places: int = 2) -> list[tuple[Any, ...]]:
    """Rows as tuples: dates as ``YYYY-MM-DD``, numbers rounded, dict/list cells as JSON text."""
    processed = []
    for row in results:
        cells: list[Any] = []
        for item in row:
            if isinstance(item, date | datetime):
                cells.append(item.strftime("%Y-%m-%d"))
                continue
            value = round_cell(item, decimal_places)
            cells.append(
                json.dumps(value, sort_keys=True) if isinstance(value, dict | list) else value
            )
        processed.append(tuple(cells))
    return processed


def remove_distinct(sql_list: list[str]) -> list[str]:
    """Each statement split on single spaces, tokens equal to ``distinct`` (any case) dropped."""
    return [" ".join(t for t in q.split(" ") if t.lower() != "distinct") for q in sql_list]


def _closing_paren(text: str, open_at: int) -> int:
    depth = 0
    for index in range(open_at, len(text)):
        if text[index] == "(":
            depth += 1
        elif text[index] == ")":
            depth -= 1
            if depth == 0:
                return index
    return -1


def _first_argument_end(text: str, start: int) -> int:
    depth = 0
    for index in range(start, len(text)):
        char = text[index]
        if char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                return index
            depth -= 1
        elif char == "," and depth == 0:
            return index
    return len(text)


def remove_round_calls(sql: str) -> str:
    """Every ``ROUND(x, n)`` replaced by ``x``, outermost first, until none is left.

    As in the official helper the pattern has no word boundary (``PROUND(`` is
    rewritten too) and an unbalanced call stops the rewriting.
    """
    text = sql
    while True:
        match = _ROUND_CALL.search(text)
        if not match:
            return text
        open_at = match.end() - 1
        close_at = _closing_paren(text, open_at)
        if close_at == -1:
            return text
        first = text[open_at + 1 : _first_argument_end(text, open_at + 1)].strip()
        text = text[: match.start()] + first + text[close_at + 1 :]


def remove_round(sql_list: list[str]) -> list[str]:
    """``remove_round_calls`` on every statement."""
    return [remove_round_calls(sql) for sql in sql_list]


def remove_comments(sql_list: list[str]) -> list[str]:
    """Block comments and newline-terminated ``--`` comments removed, blank lines collapsed."""
    cleaned = []
    for sql in sql_list:
        text = _BLOCK_COMMENT.sub("", sql)
        text = _LINE_COMMENT.sub(r"\1", text)
        text = _BLANK_LINES.sub("\n", text)
        cleaned.append(text.strip())
    return cleaned


# -- helpers bound to a database -----------------------------------------------------------


class SQLiteHelpers:
    """Official helpers for one database file."""

    dialect = "SQLite"
    test_prefix = TEST_PREFIX
    test_call = TEST_CALL
    default_test_case = DEFAULT_TEST_CASE

    def __init__(self, db_path: str, now: datetime | None = None) -> None:
        self.db_path = db_path
        self.db_name = db_path
        self._opened: list[sqlite3.Connection] = []
        self._interrupted = False
        self._clock = FixedClock(now) if now is not None else None
        """With ``now`` (``--today``), every connection opened here reads that instant."""

    def connect(self) -> sqlite3.Connection:
        """The phase's connection, opened as the official evaluator opens it (with SELECT 1)."""
        _, conn = self.perform_query_on_sqlite_databases("SELECT 1", self.db_path)
        return conn

    def close_all(self) -> None:
        for conn in self._opened:
            with contextlib.suppress(sqlite3.Error):
                conn.close()
        self._opened.clear()
        if self._clock is not None:
            self._clock.close()

    def _guard(self, conn: sqlite3.Connection, query: str) -> None:
        deadline = time.monotonic() + statement_timeout_s(query)

        def check() -> int:
            if time.monotonic() > deadline:
                self._interrupted = True
                return 1
            return 0

        conn.set_progress_handler(check, _PROGRESS_STEPS)

    def perform_query_on_sqlite_databases(
        self,
        query: str,
        db_path: str,
        conn: sqlite3.Connection | None = None,
        query_timeout: int = BUSY_TIMEOUT_S,
    ) -> tuple[Any, sqlite3.Connection]:
        """Run one statement; returns (rows, connection)."""
        lowered = query.strip().lower()
        if conn is None:
            if not os.path.exists(db_path):
                raise FileNotFoundError(f"Database not found: {db_path}")
            conn = sqlite3.connect(f"file:{db_path}?mode=rw", uri=True, timeout=query_timeout)
            conn.execute(f"PRAGMA busy_timeout = {query_timeout * 1000}")
            if self._clock is not None:
                self._clock.install(conn)
            self._opened.append(conn)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = OFF")
        cursor = conn.cursor()
        self._guard(conn, query)
        try:
            cursor.execute(query)
            if lowered.startswith(("select", "with")):
                result: Any = cursor.fetchall()
                if result and len(result) > MAX_ROWS:
                    result = result[:MAX_ROWS]
            else:
                conn.commit()
                try:
                    result = cursor.fetchall()
                except Exception:
                    result = None
            return result, conn
        except Exception:
            conn.rollback()
            raise
        finally:
            conn.set_progress_handler(None, 0)
            cursor.close()

    def run(
        self, queries: list[str], conn: sqlite3.Connection, *, solution: bool = True
    ) -> ExecOutcome:
        """``execute_queries`` with the reasons kept: stop at the first error."""
        outcome = ExecOutcome()
        for number, query in enumerate(queries, start=1):
            self._interrupted = False
            try:
                outcome.rows, conn = self.perform_query_on_sqlite_databases(
                    query, self.db_path, conn=conn
                )
            except sqlite3.OperationalError as exc:
                text = str(exc)
                if self._interrupted or any(w in text.lower() for w in _TIMEOUT_WORDS):
                    outcome.timeout = True
                    outcome.messages.append(f"statement {number} timed out: {text}")
                else:
                    outcome.error = True
                    if text.lower().startswith("no such table") and counts_as_missing(query):
                        outcome.missing_table = outcome.missing_table or text
                    outcome.messages.append(f"statement {number} failed: {text}")
                break
            except Exception as exc:
                outcome.error = True
                outcome.messages.append(f"statement {number} failed: {exc}")
                break
        return outcome

    def execute_queries(
        self,
        queries: list[str] | str,
        db_path: str,
        conn: sqlite3.Connection,
        logger: Any = None,
        section_title: str = "",
        return_error: bool = False,
    ) -> tuple[Any, ...]:
        """(last rows, execution error, timeout[, error text]), stopping at the first error.

        A string is one statement (the official SQLite helper wraps it in a list;
        the PostgreSQL and MySQL ones do not, and iterate over its characters).
        """
        outcome = self.run([queries] if isinstance(queries, str) else queries, conn)
        if return_error:
            text = "".join(f"{m}\n" for m in outcome.messages)
            return outcome.rows, outcome.error, outcome.timeout, text
        return outcome.rows, outcome.error, outcome.timeout

    def ex_base(
        self,
        pred_sqls: list[str],
        sol_sqls: list[str],
        db_path: str,
        conn: sqlite3.Connection,
        conditions: dict[str, Any] | None = None,
    ) -> int:
        """1 if both lists run and their last results match (as sets, or in order if asked)."""
        if not pred_sqls or not sol_sqls:
            return 0
        predicted, pred_error, pred_timeout = self.execute_queries(pred_sqls, db_path, conn)
        expected, gt_error, gt_timeout = self.execute_queries(sol_sqls, db_path, conn)
        if any([pred_error, pred_timeout, gt_error, gt_timeout]):
            return 0
        predicted = preprocess_results(predicted)
        expected = preprocess_results(expected)
        if not predicted or not expected:
            return 0
        if conditions is not None and conditions.get("order", False):
            return 1 if predicted == expected else 0
        return 1 if set(predicted) == set(expected) else 0

    def test_globals(self, pred_query_result: Any) -> dict[str, Any]:
        """The globals a test case sees, as in the official SQLite evaluator."""
        return {
            "perform_query_on_sqlite_databases": self.perform_query_on_sqlite_databases,
            "execute_queries": self.execute_queries,
            "ex_base": self.ex_base,
            "check_sql_function_usage": check_sql_function_usage,
            "remove_distinct": remove_distinct,
            "remove_comments": remove_comments,
            "remove_round": remove_round,
            "preprocess_results": preprocess_results,
            "pred_query_result": pred_query_result,
            "date": date,
        }
