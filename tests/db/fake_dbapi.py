"""A small fake DB-API 2 connection for testing executors without a server.

The test gives a `respond(sql)` function: it returns `Rows(columns, rows)`
for a query, `None` for a statement without a result set, or raises (a
driver exception). Everything sent is logged in order, with rollbacks and
closes, so tests can assert the exact conversation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass
class Rows:
    columns: list[str]
    rows: list[tuple[Any, ...]]


Respond = Callable[[str], "Rows | None"]


def answer_nothing(_sql: str) -> Rows | None:
    return None


class FakeConnection:
    """Logs statements, rollbacks and closes; answers through `respond`."""

    def __init__(self, respond: Respond = answer_nothing) -> None:
        self.respond = respond
        self.log: list[str] = []
        self.fetch_sizes: list[int] = []
        self.parsed: list[str] = []
        self.timeouts: list[int] = []
        """Every timeout set: pymssql's query_timeout (s) or oracledb's call_timeout (ms)."""
        self.closed = False
        self._conn = self  # pymssql keeps its query timeout on `_conn`

    # the two drivers' timeout attributes
    @property
    def query_timeout(self) -> int:
        return self.timeouts[-1] if self.timeouts else 0

    @query_timeout.setter
    def query_timeout(self, value: int) -> None:
        self.timeouts.append(value)

    @property
    def call_timeout(self) -> int:
        return self.timeouts[-1] if self.timeouts else 0

    @call_timeout.setter
    def call_timeout(self, value: int) -> None:
        self.timeouts.append(value)

    def cursor(self) -> FakeCursor:
        if self.closed:
            raise RuntimeError("connection closed")
        return FakeCursor(self)

    def rollback(self) -> None:
        self.log.append("<rollback>")

    def commit(self) -> None:  # executors must never call it
        self.log.append("<COMMIT>")

    def close(self) -> None:
        self.closed = True
        self.log.append("<close>")

    @property
    def sent(self) -> list[str]:
        """What reached the server, without the bookkeeping entries."""
        return [entry for entry in self.log if not entry.startswith("<")]


class FakeCursor:
    def __init__(self, conn: FakeConnection) -> None:
        self.conn = conn
        self.description: list[tuple[Any, ...]] | None = None
        self.rowcount = -1
        self._rows: list[tuple[Any, ...]] = []

    def execute(self, sql: str, params: Any = None) -> None:
        self.conn.log.append(sql)
        outcome = self.conn.respond(sql)
        if outcome is None:
            self.description, self._rows, self.rowcount = None, [], 1
            return
        self.description = [(name, None, None, None, None, None, None) for name in outcome.columns]
        self._rows = list(outcome.rows)
        self.rowcount = -1

    def fetchmany(self, size: int) -> list[tuple[Any, ...]]:
        self.conn.fetch_sizes.append(size)
        taken, self._rows = self._rows[:size], self._rows[size:]
        return taken

    def parse(self, sql: str) -> None:  # python-oracledb
        self.conn.parsed.append(sql)
        self.conn.respond(sql)

    def close(self) -> None:
        pass


class Connector:
    """A `connect()` callable that hands out fresh fake connections and keeps them."""

    def __init__(
        self, respond: Respond = answer_nothing, fail: BaseException | None = None
    ) -> None:
        self.respond = respond
        self.fail = fail
        self.connections: list[FakeConnection] = []

    def __call__(self) -> FakeConnection:
        if self.fail is not None:
            raise self.fail
        conn = FakeConnection(self.respond)
        self.connections.append(conn)
        return conn

    @property
    def last(self) -> FakeConnection:
        return self.connections[-1]
