"""The PostgreSQL evaluator's helper functions, bound to one task's database.

The official evaluator talks to PostgreSQL through psycopg2, and so does this
one: test cases rely on psycopg2's behaviour (a string holding several
statements returns the *last* statement's rows; ``json`` cells come back as
Python objects; a failed statement leaves the transaction aborted until
rolled back). Each statement runs as the official one runs it: set the
statement timeout (60 s; 15 s when the text contains WITH RECURSIVE, after an
attempt to set ``max_recursive_iterations`` that PostgreSQL rejects and rolls
back), execute, commit, fetch at most 10,000 rows, reset the timeout.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Sequence
from datetime import date
from typing import Any, TypeAlias

import psycopg2  # type: ignore[import-untyped]
import psycopg2.errors  # type: ignore[import-untyped]
import psycopg2.pool  # type: ignore[import-untyped]

from acts_sql.bench.helpers.common import (
    MAX_ROWS,
    ExecOutcome,
    check_sql_function_usage,
    counts_as_missing,
    is_recursive,
    missing_extension,
    preprocess_results,
    remove_distinct,
    same_row_sets,
    starts_like_dml,
)

Connection: TypeAlias = Any
"""A psycopg2 connection (psycopg2 ships no type information)."""
POOL_LIMIT = 10
TEST_PREFIX = "from datetime import date\n"
TEST_CALL = "\n__test_case_result__ = test_case(pred_sqls, sol_sqls, db_name, conn)"


class PoolExhaustedError(psycopg2.pool.PoolError):
    """More connections asked for than the official pool would give."""


class PostgresHelpers:
    """Official helpers for one database; ``dsn_for(name)`` is how to reach a database by name."""

    dialect = "PostgreSQL"
    test_prefix = TEST_PREFIX
    test_call = TEST_CALL

    def __init__(self, dsn_for: Callable[[str], str], db_name: str) -> None:
        self.dsn_for = dsn_for
        self.db_name = db_name
        self._opened: list[Connection] = []

    # -- connections ----------------------------------------------------------------

    def new_connection(self, db_name: str) -> Connection:
        """A new connection, as the official pool hands out (it never takes one back)."""
        if len(self._opened) >= POOL_LIMIT:
            raise PoolExhaustedError("connection pool exhausted")
        conn = psycopg2.connect(self.dsn_for(db_name))
        self._opened.append(conn)
        return conn

    def connect(self) -> Connection:
        """The task's connection, opened as the official evaluator opens it (with SELECT 1)."""
        _, conn = self.perform_query_on_postgresql_databases("SELECT 1", self.db_name)
        return conn

    def close_all(self) -> None:
        for conn in self._opened:
            with contextlib.suppress(psycopg2.Error):
                conn.close()
        self._opened.clear()

    # -- the official functions ------------------------------------------------------

    def perform_query_on_postgresql_databases(
        self, query: str, db_name: str, conn: Connection | None = None
    ) -> tuple[Any, Connection]:
        """Run one query string; returns (rows or None, connection)."""
        if conn is None:
            conn = self.new_connection(db_name)
        cursor = conn.cursor()
        recursive = is_recursive(query)
        if recursive:
            try:
                cursor.execute("SET max_recursive_iterations = 100;")
                cursor.execute("SET statement_timeout = '15s';")
            except Exception:
                conn.rollback()
                cursor.execute("SET statement_timeout = '15s';")
        else:
            cursor.execute("SET statement_timeout = '60s';")
        try:
            cursor.execute(query)
            conn.commit()
            try:
                rows = cursor.fetchmany(MAX_ROWS + 1)
                result: Any = rows[:MAX_ROWS] if len(rows) > MAX_ROWS else rows
            except psycopg2.ProgrammingError:
                result = None
            return result, conn
        except Exception:
            conn.rollback()
            raise
        finally:
            with contextlib.suppress(Exception):
                cursor.execute("SET statement_timeout = '60s';")
            cursor.close()

    def run(
        self, queries: Sequence[str], conn: Connection, *, solution: bool = True
    ) -> ExecOutcome:
        """``execute_queries`` with the reasons kept: stop at the first error."""
        outcome = ExecOutcome()
        for number, query in enumerate(queries, start=1):
            try:
                outcome.rows, conn = self.perform_query_on_postgresql_databases(
                    query, self.db_name, conn=conn
                )
            except psycopg2.errors.QueryCanceled as exc:
                outcome.timeout = True
                outcome.messages.append(f"statement {number} timed out: {_first_line(exc)}")
                break
            except psycopg2.errors.UndefinedTable as exc:
                outcome.error = True
                if counts_as_missing(query):
                    outcome.missing_table = outcome.missing_table or _first_line(exc)
                outcome.messages.append(f"statement {number} failed: {_first_line(exc)}")
                break
            except Exception as exc:
                outcome.error = True
                outcome.missing_extension = outcome.missing_extension or missing_extension(str(exc))
                outcome.messages.append(f"statement {number} failed: {_first_line(exc)}")
                break
        return outcome

    def execute_queries(
        self,
        queries: list[str] | str,
        db_name: str,
        conn: Connection,
        logger: Any = None,
        section_title: str = "",
    ) -> tuple[Any, bool, bool]:
        """(last rows, execution error, timeout), stopping at the first error.

        As in the official helper a string is not wrapped in a list: its
        characters run one by one, and the first fails (SQLite's helper differs).
        """
        outcome = self.run(queries, conn)
        return outcome.rows, outcome.error, outcome.timeout

    def ex_base(
        self, pred_sqls: list[str], sol_sqls: list[str], db_name: str, conn: Connection
    ) -> int:
        """1 if both lists run and their last results hold the same set of rows."""
        if not pred_sqls or not sol_sqls:
            return 0
        predicted, pred_error, pred_timeout = self.execute_queries(pred_sqls, db_name, conn)
        expected, gt_error, gt_timeout = self.execute_queries(sol_sqls, db_name, conn)
        if gt_error or gt_timeout or pred_error or pred_timeout:
            return 0
        if not predicted or not expected:
            return 0
        return same_row_sets(preprocess_results(predicted), preprocess_results(expected))

    def performance_compare_by_qep(
        self, old_sqls: list[str], sol_sqls: list[str], db_name: str, conn: Connection
    ) -> int:
        """1 if the summed EXPLAIN total cost of ``sol_sqls`` is below that of ``old_sqls``."""
        if not old_sqls or not sol_sqls:
            print("Either old_sqls or sol_sqls is empty. Returning 0.")
            return 0

        def measure(sql_list: list[str]) -> float:
            total = 0.0
            for sql in sql_list:
                if not starts_like_dml(sql):
                    try:
                        self.perform_query_on_postgresql_databases(sql, db_name, conn=conn)
                    except Exception as exc:
                        print(f"[measure_sqls_cost] Error executing non-DML '{sql}': {exc}")
                    continue
                try:
                    rows, _ = self.perform_query_on_postgresql_databases(
                        f"EXPLAIN (FORMAT JSON) {sql}", db_name, conn=conn
                    )
                    if not rows:
                        continue
                    plan = rows[0][0]
                    if isinstance(plan, str):
                        plan = json.loads(plan)
                    part = 0.0
                    if isinstance(plan, list) and len(plan) > 0:
                        part = plan[0].get("Plan", {}).get("Total Cost", 0.0)
                    total += float(part)
                except Exception as exc:
                    print(f"[measure_sqls_cost] error on SQL '{sql}': {exc}")
            return total

        try:
            self.perform_query_on_postgresql_databases("BEGIN", db_name, conn=conn)
            old_cost = measure(old_sqls)
        finally:
            self.perform_query_on_postgresql_databases("ROLLBACK", db_name, conn=conn)
        try:
            self.perform_query_on_postgresql_databases("BEGIN", db_name, conn=conn)
            new_cost = measure(sol_sqls)
        finally:
            self.perform_query_on_postgresql_databases("ROLLBACK", db_name, conn=conn)
        return 1 if new_cost < old_cost else 0

    def test_globals(self, pred_query_result: Any) -> dict[str, Any]:
        """The globals a test case sees, as in the official PostgreSQL evaluator."""
        return {
            "perform_query_on_postgresql_databases": self.perform_query_on_postgresql_databases,
            "execute_queries": self.execute_queries,
            "ex_base": self.ex_base,
            "performance_compare_by_qep": self.performance_compare_by_qep,
            "check_sql_function_usage": check_sql_function_usage,
            "remove_distinct": remove_distinct,
            "preprocess_results": preprocess_results,
            "pred_query_result": pred_query_result,
            "date": date,
        }


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]
