"""The SQL Server and Oracle executors' driver hooks over any DB-API driver.

`DbapiExecutor` plugs a DB-API connection into the shared loop
(`base.BaseExecutor`): the read-only guard first (with writes allowed:
`permit_when_writing`), text the guard cannot parse to the server's
non-executing parse; the connection opened lazily (and again after a timeout
or a broken connection), the dialect's session setup run once; every batch
inside a transaction that is ALWAYS rolled back (`begin_sql`, `rollback`),
each statement under the driver's timeout, fetching at most `max_rows + 1`
rows. So every call is already isolated, and `isolate` changes nothing. (What
a rollback cannot undo: SQL Server IDENTITY values a rolled-back INSERT used;
sequences and, on Oracle, DDL are blocked for that reason.)

A driver module (mssql.py, oracle.py) supplies the connection and the SQL it
sends, as small pure functions, and classifies the driver's exceptions.
Nothing here is specific to one driver, so the whole loop is tested with a
fake DB-API connection. Stand-ins are empty CTEs (`CteScratchSession`).
"""

from __future__ import annotations

import re
import time
from abc import abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from typing import Any

from acts_sql.db.base import BaseExecutor, fetch_result, needs_columns, since
from acts_sql.db.cells import json_safe
from acts_sql.db.result import ExecResult
from acts_sql.db.statements import strip_leading_comments
from acts_sql.sql.dialects import Dialect
from acts_sql.sql.query_text import split_statements

Connect = Callable[[], Any]
"""Opens a new DB-API connection."""


class DbapiExecutor(BaseExecutor):
    """One database on a server, through one lazily (re)opened DB-API connection."""

    def __init__(
        self,
        connect: Connect,
        *,
        timeout: float | None = None,
        max_rows: int | None = None,
        allow_writes: bool = False,
    ) -> None:
        super().__init__(timeout=timeout, max_rows=max_rows, allow_writes=allow_writes)
        self._connect = connect
        self._conn: Any = None
        self._cursor: Any = None
        self._broken = False
        """The batch timed out or lost its connection: drop the connection at its end."""

    # ------------------------------------------------------------ driver hooks

    @abstractmethod
    def session_setup(self) -> list[str]:
        """Statements run once on every new connection."""

    @abstractmethod
    def begin_sql(self, *, read_only: bool) -> list[str]:
        """Statements that open the transaction of one batch."""

    @abstractmethod
    def rollback(self, conn: Any) -> None:
        """End the batch's transaction without keeping anything."""

    @abstractmethod
    def set_timeout(self, conn: Any, seconds: float) -> None:
        """Bound the next statement's run time through the driver."""

    @abstractmethod
    def statement_text(self, statement: str) -> str:
        """The text sent for one statement (e.g. without a trailing `;`)."""

    @abstractmethod
    def classify(self, exc: BaseException, *, timeout: float, statement: str) -> ExecResult:
        """The typed result of a driver exception raised by `statement`."""

    def convert(self, value: Any) -> Any:
        """One cell as a JSON-safe value."""
        return json_safe(value)

    # ------------------------------------------------------------ the loop's hooks

    @contextmanager
    def scratch(self) -> Iterator[CteScratchSession]:
        """A scratch session whose stand-ins are empty CTEs (nothing is created)."""
        yield CteScratchSession(self)

    def _connection(self) -> Any:
        if self._conn is None:
            conn = self._connect()
            cursor = conn.cursor()
            try:
                for statement in self.session_setup():
                    cursor.execute(statement)
            finally:
                cursor.close()
            self._conn = conn
        return self._conn

    def _discard(self) -> None:
        """Drop the connection (after a timeout or failure); the next batch reconnects."""
        conn, self._conn = self._conn, None
        if conn is not None:
            with suppress(Exception):
                conn.close()

    _disconnect = _discard

    def _begin(
        self, *, read_only: bool | None = None, isolating: bool = False
    ) -> ExecResult | None:
        """Open the batch's transaction (each batch is rolled back: `isolating` is moot)."""
        try:
            self._cursor = self._connection().cursor()
        except Exception as exc:  # connecting failed: a typed result, not a crash
            self._discard()
            return self.classify(exc, timeout=0.0, statement="")
        ro = not self.allow_writes if read_only is None else read_only
        try:
            for statement in self.begin_sql(read_only=ro):
                self._cursor.execute(statement)
        except Exception as exc:  # the transaction could not be opened
            failure = self._failed(self.classify(exc, timeout=0.0, statement=""))
            self._end()
            return failure
        return None

    def _end(self) -> None:
        cursor, self._cursor = self._cursor, None
        with suppress(Exception):
            cursor.close()
        try:
            self.rollback(self._conn)
        except Exception:  # a connection that cannot roll back is not reused
            self._discard()
        if self._broken:
            self._broken = False
            self._discard()

    def _run_statement(self, statement: str, max_rows: int, timeout: float) -> ExecResult:
        started = time.monotonic()
        try:
            self.set_timeout(self._conn, timeout)
            self._cursor.execute(self.statement_text(statement))
            result = fetch_result(self._cursor, max_rows, self.convert)
        except Exception as exc:  # every driver failure becomes a typed result
            result = self._failed(self.classify(exc, timeout=timeout, statement=statement))
        return result.model_copy(update={"seconds": since(started)})

    def _failed(self, result: ExecResult) -> ExecResult:
        """`result`; a timeout or a lost connection marks the connection for dropping."""
        if result.status == "timeout" or result.error_kind == "other":
            self._broken = True
        return result


class CteScratchSession:
    """Stand-ins as empty CTEs prepended to every statement of the session.

    Nothing is created on the server, so no privilege is needed and nothing
    is left behind; a CTE shadows a table of the same name, as a TEMP table
    would. (SQL Server's #temp tables and Oracle's private temporary tables
    carry a required prefix, so the unit's plain references would not reach
    them; Oracle DDL also commits.)
    """

    def __init__(self, executor: DbapiExecutor) -> None:
        self._executor = executor
        self._stand_ins: dict[str, list[str]] = {}

    @property
    def stand_ins(self) -> dict[str, list[str]]:
        return dict(self._stand_ins)

    def create_stand_in(self, name: str, columns: Sequence[str]) -> ExecResult:
        """Record an empty stand-in `name(columns)` for the later statements."""
        if not columns:
            return needs_columns(name)
        self._stand_ins[name] = list(columns)
        return ExecResult(status="ok")

    def execute(
        self, sql: str, *, max_rows: int | None = None, timeout: float | None = None
    ) -> ExecResult:
        """Run `sql` with the stand-ins in scope (same rules as the executor)."""
        dialect = self._executor.spec
        texts = split_statements(sql, dialect) or [sql]
        wrapped = ";\n".join(with_stand_ins(text, self._stand_ins, dialect) for text in texts)
        return self._executor.execute(wrapped, max_rows=max_rows, timeout=timeout)


# ------------------------------------------------------------------ stand-ins as CTEs


_PLAIN_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_$#]*")
_ORACLE_RESERVED = frozenset(
    re.findall(
        r"\w+",
        """ACCESS ADD ALL ALTER AND ANY AS ASC AUDIT BETWEEN BY CHAR CHECK CLUSTER COLUMN COMMENT
    COMPRESS CONNECT CREATE CURRENT DATE DECIMAL DEFAULT DELETE DESC DISTINCT DROP ELSE EXCLUSIVE
    EXISTS FILE FLOAT FOR FROM GRANT GROUP HAVING IDENTIFIED IMMEDIATE IN INCREMENT INDEX INITIAL
    INSERT INTEGER INTERSECT INTO IS LEVEL LIKE LOCK LONG MAXEXTENTS MINUS MLSLABEL MODE MODIFY
    NOAUDIT NOCOMPRESS NOT NOWAIT NULL NUMBER OF OFFLINE ON ONLINE OPTION OR ORDER PCTFREE PRIOR
    PUBLIC RAW RENAME RESOURCE REVOKE ROW ROWID ROWNUM ROWS SELECT SESSION SET SHARE SIZE SMALLINT
    START SUCCESSFUL SYNONYM SYSDATE TABLE THEN TO TRIGGER UID UNION UNIQUE UPDATE USER VALIDATE
    VALUES VARCHAR VARCHAR2 VIEW WHENEVER WHERE WITH""",
    )
)


def stand_in_name(name: str, dialect: Dialect) -> str:
    """How a stand-in's name (or column) is written so the unit's own,
    usually unquoted, references find it.

    Oracle folds unquoted names to upper case, so a plain name is written
    unquoted (quoting `"dep"` would make it lower case and unreachable); any
    other name, and every name elsewhere, is quoted.
    """
    plain = _PLAIN_NAME.fullmatch(name) is not None and name.upper() not in _ORACLE_RESERVED
    if dialect.name == "oracle" and plain:
        return name
    return dialect.quote_identifier(name)


def stand_in_cte(name: str, columns: Sequence[str], dialect: Dialect) -> str:
    """`name (c1, c2) AS (SELECT NULL, NULL [FROM dual] WHERE 1 = 0)`: an empty
    relation whose untyped NULL columns combine with any type."""
    cols = ", ".join(stand_in_name(col, dialect) for col in columns)
    nulls = ", ".join("NULL" for _ in columns)
    source = " FROM dual" if dialect.name == "oracle" else ""
    return f"{stand_in_name(name, dialect)} ({cols}) AS (SELECT {nulls}{source} WHERE 1 = 0)"


_WITH_HEAD = re.compile(r"WITH\b(\s+RECURSIVE\b)?", re.IGNORECASE)


def with_stand_ins(sql: str, stand_ins: Mapping[str, Sequence[str]], dialect: Dialect) -> str:
    """`sql` with every stand-in prepended as an empty CTE.

    Works on the text, so a unit with a syntax error still reaches the server
    and gets the server's own message: a statement starting with WITH gets
    the stand-ins first in its CTE list, any other is prefixed with a WITH.
    """
    if not stand_ins:
        return sql
    body = strip_leading_comments(sql)
    defs = ", ".join(stand_in_cte(name, cols, dialect) for name, cols in stand_ins.items())
    head = _WITH_HEAD.match(body)
    if head is None:
        return f"WITH {defs}\n{body}"
    return f"{body[: head.end()]} {defs},{body[head.end() :]}"
