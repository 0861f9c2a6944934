"""The MySQL evaluator's helper functions (run here on MariaDB), bound to one task's database.

As in the official evaluator (PyMySQL): statements run one by one on one
connection and an error does *not* stop the list (it still marks the
execution as failed); a statement is committed when its text contains one of
the official "commit keywords" (a plain substring test); a failed statement
is rolled back. Statement time limit: MariaDB's ``max_statement_time`` (60 s,
15 s for WITH RECURSIVE), MySQL's ``MAX_EXECUTION_TIME`` where that is the
server.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Sequence
from datetime import date, datetime
from typing import Any, TypeAlias

import pymysql  # type: ignore[import-untyped]

from acts_sql.bench.helpers.common import (
    MAX_ROWS,
    ExecOutcome,
    check_sql_function_usage,
    counts_as_missing,
    preprocess_results,
    remove_distinct,
    same_row_sets,
    starts_like_dml,
    statement_timeout_s,
)

Connection: TypeAlias = Any
"""A PyMySQL connection (PyMySQL ships no type information)."""
POOL_LIMIT = 5
TEST_PREFIX = "from datetime import date\n"
TEST_CALL = "\n__test_case_result__ = test_case(pred_sqls, sol_sqls, db_name, conn)"
TIMEOUT_ERRNOS = {1969, 3024}
MISSING_TABLE_ERRNO = 1146

COMMIT_KEYWORDS = (
    "insert",
    "update",
    "delete",
    "create",
    "drop",
    "alter",
    "truncate",
    "rename",
    "replace",
    "grant",
    "revoke",
    "lock tables",
    "unlock tables",
    "start transaction",
    "begin",
    "commit",
    "rollback",
    "call",
    "load data",
    "set",
    "do",
    "handler",
    "load xml",
    "merge",
    "prepare",
    "execute",
    "deallocate prepare",
    "xa",
)


class MySQLHelpers:
    """Official helpers for one database; ``connect_kwargs(name)`` are PyMySQL's arguments."""

    dialect = "MySQL"
    test_prefix = TEST_PREFIX
    test_call = TEST_CALL

    def __init__(
        self,
        connect_kwargs: Callable[[str], dict[str, Any]],
        db_name: str,
        now: datetime | None = None,
    ) -> None:
        self.connect_kwargs = connect_kwargs
        self.db_name = db_name
        self.now = now
        """With ``now`` (``--today``), every connection's clock shows that instant
        (``SET timestamp``: NOW(), CURDATE(), CURRENT_TIMESTAMP ...; not SYSDATE())."""
        self._opened: list[Connection] = []
        self._timeout_style: str | None = None

    def new_connection(self, db_name: str) -> Connection:
        if len(self._opened) >= POOL_LIMIT:
            raise pymysql.err.OperationalError(2000, "connection pool exhausted")
        conn = pymysql.connect(**self.connect_kwargs(db_name))
        self._opened.append(conn)
        if self.now is not None:
            with conn.cursor() as cursor:
                cursor.execute(f"SET timestamp = {int(self.now.timestamp())}")
        return conn

    def connect(self) -> Connection:
        """The task's connection, opened as the official evaluator opens it (with SELECT 1)."""
        _, conn = self.perform_query_on_mysql_databases("SELECT 1", self.db_name)
        return conn

    def close_all(self) -> None:
        for conn in self._opened:
            with contextlib.suppress(Exception):
                conn.close()
        self._opened.clear()

    def _set_time_limit(self, conn: Connection, query: str) -> None:
        seconds = statement_timeout_s(query)
        styles = [self._timeout_style] if self._timeout_style else ["mariadb", "mysql"]
        for style in styles:
            sql = (
                f"SET SESSION max_statement_time = {seconds}"
                if style == "mariadb"
                else f"SET SESSION MAX_EXECUTION_TIME = {seconds * 1000}"
            )
            try:
                with conn.cursor() as cursor:
                    cursor.execute(sql)
                self._timeout_style = style
                return
            except Exception:
                continue

    # -- the official functions ------------------------------------------------------

    def perform_query_on_mysql_databases(
        self, query: str, db_name: str, conn: Connection | None = None
    ) -> tuple[Any, Connection]:
        """Run one statement; returns (rows, connection)."""
        if conn is None:
            conn = self.new_connection(db_name)
        self._set_time_limit(conn, query)
        cursor = conn.cursor()
        try:
            cursor.execute(query)
            lowered = query.strip().lower()
            if any(keyword in lowered for keyword in COMMIT_KEYWORDS):
                conn.commit()
            try:
                rows = cursor.fetchmany(MAX_ROWS + 1)
                result: Any = rows[:MAX_ROWS] if len(rows) > MAX_ROWS else rows
            except pymysql.err.ProgrammingError:
                result = None
            return result, conn
        except Exception:
            conn.rollback()
            raise
        finally:
            cursor.close()

    def run(
        self, queries: Sequence[str], conn: Connection, *, solution: bool = True
    ) -> ExecOutcome:
        """``execute_queries`` with the reasons kept: every statement runs, errors are noted."""
        outcome = ExecOutcome()
        for number, query in enumerate(queries, start=1):
            try:
                outcome.rows, conn = self.perform_query_on_mysql_databases(
                    query, self.db_name, conn=conn
                )
            except Exception as exc:
                errno = exc.args[0] if exc.args and isinstance(exc.args[0], int) else None
                if errno == MISSING_TABLE_ERRNO and counts_as_missing(query):
                    outcome.missing_table = outcome.missing_table or _message(exc)
                if solution:
                    if errno in TIMEOUT_ERRNOS:
                        outcome.timeout = True
                    else:
                        outcome.error = True
                outcome.messages.append(f"statement {number} failed: {_message(exc)}")
        return outcome

    def execute_queries(
        self,
        queries: list[str] | str,
        db_name: str,
        conn: Connection,
        logger: Any = None,
        section_title: str = "",
        is_solution: bool = True,
    ) -> tuple[Any, bool, bool, str]:
        """(last successful rows, execution error, timeout, error text); errors do not stop it.

        Like the official helper, a statement time-out counts as an execution error here,
        and a string is not wrapped in a list: each of its characters runs (and fails).
        """
        outcome = self.run(queries, conn, solution=is_solution)
        failed = outcome.error or outcome.timeout
        text = "".join(f"\n {m}" for m in outcome.messages)
        return outcome.rows, failed, False, text

    def ex_base(
        self, pred_sqls: list[str], sol_sqls: list[str], db_name: str, conn: Connection
    ) -> int:
        """1 if the last results of both lists hold the same set of rows (errors are ignored)."""
        if not pred_sqls or not sol_sqls:
            return 0
        predicted, _, _, _ = self.execute_queries(pred_sqls, db_name, conn, None, "", True)
        expected, _, _, _ = self.execute_queries(sol_sqls, db_name, conn, None, "", True)
        if not predicted or not expected:
            return 0
        return same_row_sets(preprocess_results(predicted), preprocess_results(expected))

    def performance_compare_by_qep(
        self, old_sqls: list[str], sol_sqls: list[str], db_name: str, conn: Connection
    ) -> int:
        """1 if the summed ``query_cost`` of EXPLAIN FORMAT=JSON is lower for ``sol_sqls``."""

        def measure(sql_list: list[str]) -> float:
            total = 0.0
            for sql in sql_list:
                if not starts_like_dml(sql):
                    try:
                        self.perform_query_on_mysql_databases(sql, db_name, conn)
                    except Exception as exc:
                        print(f"[measure_sqls_cost] Error executing '{sql}': {exc}")
                    continue
                try:
                    rows, _ = self.perform_query_on_mysql_databases(
                        f"EXPLAIN FORMAT=JSON {sql}", db_name, conn=conn
                    )
                    if not rows:
                        continue
                    if len(rows[0]) > 0 and rows[0][0]:
                        try:
                            plan = json.loads(rows[0][0])
                            cost = plan.get("query_block", {}).get("cost_info", {})
                            total += float(cost.get("query_cost", "0.0"))
                        except Exception as exc:
                            print(f"Failed to parse EXPLAIN JSON: {exc}")
                except Exception as exc:
                    print(f"[measure_sqls_cost] Unexpected error on SQL '{sql}': {exc}")
            return total

        old_cost = measure(old_sqls)
        new_cost = measure(sol_sqls)
        return 1 if new_cost < old_cost else 0

    def test_globals(self, pred_query_result: Any) -> dict[str, Any]:
        """The globals a test case sees, as in the official MySQL evaluator."""
        return {
            "perform_query_on_mysql_databases": self.perform_query_on_mysql_databases,
            "execute_queries": self.execute_queries,
            "ex_base": self.ex_base,
            "performance_compare_by_qep": self.performance_compare_by_qep,
            "check_sql_function_usage": check_sql_function_usage,
            "remove_distinct": remove_distinct,
            "preprocess_results": preprocess_results,
            "pred_query_result": pred_query_result,
            "date": date,
        }


def _message(exc: BaseException) -> str:
    if len(exc.args) >= 2 and isinstance(exc.args[0], int):
        return f"({exc.args[0]}) {exc.args[1]}"
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]
