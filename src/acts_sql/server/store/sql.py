"""The run store: runs and their events in SQL tables (SQLite or PostgreSQL).

One thread writes (the journal's), in batches of one transaction each; any
thread reads, on a connection of its own. Opening the store takes it for
this process (a second service would mark this one's runs interrupted),
creates the tables, and marks the runs a previous process left in progress
``interrupted``, keeping their events up to the first one missing.

Retention: once more than `max_runs` runs have ended, the oldest ended ones
are deleted (with their events) in the same transaction as the newest end;
runs created more than `max_age_s` ago are deleted at most every
`age_check_s`. Runs in progress are never deleted.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any, Protocol

from acts_sql.errors import ActsSqlError, ConfigError
from acts_sql.server.errors import ErrorBody, ErrorCode
from acts_sql.server.models import RunState
from acts_sql.server.run import Run
from acts_sql.server.store.records import (
    RUN_COLUMNS,
    Created,
    Ended,
    Event,
    Op,
    created_row,
    ended_row,
    event_row,
    run_from_row,
)

SCHEMA_VERSION = "1"
ACTIVE = "('queued', 'running')"

INSERT_RUN = (
    "INSERT INTO acts_sql_runs (run_id, view_key, status, spec, created_at, started_at) "
    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run_id) DO NOTHING"
)
INSERT_EVENT = (
    "INSERT INTO acts_sql_run_events (run_id, seq, event) VALUES (?, ?, ?) "
    "ON CONFLICT (run_id, seq) DO NOTHING"
)
END_RUN = (
    "UPDATE acts_sql_runs SET status = ?, started_at = ?, finished_at = ?, event_count = ?, "
    "result = ?, error = ? WHERE run_id = ?"
)
GET_RUN = f"SELECT {RUN_COLUMNS}, result FROM acts_sql_runs WHERE run_id = ?"
GET_EVENTS = "SELECT event FROM acts_sql_run_events WHERE run_id = ? AND seq < ? ORDER BY seq"
RECENT = (
    f"SELECT {RUN_COLUMNS} FROM acts_sql_runs WHERE status NOT IN {ACTIVE} "
    "ORDER BY created_at DESC LIMIT ?"
)
COUNT_ENDED = f"SELECT COUNT(*) FROM acts_sql_runs WHERE status NOT IN {ACTIVE}"
OLDEST_ENDED = (
    f"SELECT run_id FROM acts_sql_runs WHERE status NOT IN {ACTIVE} ORDER BY created_at LIMIT ?"
)
CREATED_BEFORE = f"SELECT run_id FROM acts_sql_runs WHERE status NOT IN {ACTIVE} AND created_at < ?"
DELETE_EVENTS = "DELETE FROM acts_sql_run_events WHERE run_id = ?"
DELETE_RUN = "DELETE FROM acts_sql_runs WHERE run_id = ?"
UNFINISHED = f"SELECT run_id FROM acts_sql_runs WHERE status IN {ACTIVE}"
EVENT_SEQS = "SELECT seq FROM acts_sql_run_events WHERE run_id = ? ORDER BY seq"
DELETE_EVENTS_FROM = "DELETE FROM acts_sql_run_events WHERE run_id = ? AND seq >= ?"
INTERRUPT = (
    "UPDATE acts_sql_runs SET status = ?, finished_at = ?, event_count = ?, error = ? "
    "WHERE run_id = ?"
)
MARK_VERSION = (
    "INSERT INTO acts_sql_store (name, value) VALUES ('schema', ?) ON CONFLICT (name) DO NOTHING"
)
GET_VERSION = "SELECT value FROM acts_sql_store WHERE name = 'schema'"

INTERRUPTED = ErrorBody(
    code=ErrorCode.SHUTTING_DOWN,
    message="the service stopped while this run was in progress; it did not finish",
)


class Driver(Protocol):
    """What the store needs of a database: SQLiteDriver, PostgresDriver."""

    description: str
    errors: tuple[type[BaseException], ...]

    def lock(self) -> None: ...
    def unlock(self) -> None: ...
    def connect(self) -> Any: ...
    def usable(self, conn: Any) -> bool: ...
    def transaction(self, conn: Any, *, write: bool) -> contextlib.AbstractContextManager[None]: ...
    def query(self, conn: Any, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...
    def execute(self, conn: Any, sql: str, params: Sequence[Any] = ()) -> None: ...
    def executemany(self, conn: Any, sql: str, rows: Sequence[Sequence[Any]]) -> None: ...


@dataclass(frozen=True)
class Retention:
    max_runs: int
    max_age_s: float | None = None
    age_check_s: float = 60.0


class SqlRunStore:
    """See the module docstring. Make one with `SqlRunStore.open`."""

    def __init__(self, driver: Driver, retention: Retention) -> None:
        self._driver = driver
        self._retention = retention
        self._write_conn: Any = None
        self._read_conn: Any = None
        self._read_lock = threading.Lock()
        self._ended = 0
        self._age_checked = float("-inf")
        self.interrupted = 0
        """Runs found in progress at open, now interrupted."""

    @property
    def description(self) -> str:
        return self._driver.description

    @classmethod
    def open(cls, driver: Driver, retention: Retention) -> SqlRunStore:
        """The store, ready; ConfigError (one line) when it cannot be opened."""
        store = cls(driver, retention)
        errors: tuple[type[BaseException], ...] = (ActsSqlError, *driver.errors)
        try:
            driver.lock()
            store._write_conn = driver.connect()
            store._read_conn = driver.connect()
            store._prepare()
        except ConfigError:
            store.close()
            raise
        except errors as exc:
            store.close()
            reason = " ".join(str(exc).split()) or type(exc).__name__
            raise ConfigError(f"store {driver.description}: cannot be opened ({reason})") from None
        return store

    def _prepare(self) -> None:
        conn, driver = self._write_conn, self._driver
        with driver.transaction(conn, write=True):
            for statement in _schema():
                driver.execute(conn, statement)
            driver.execute(conn, MARK_VERSION, (SCHEMA_VERSION,))
            version = driver.query(conn, GET_VERSION)[0][0]
            if version != SCHEMA_VERSION:
                raise ConfigError(
                    f"store {driver.description}: its tables are version {version}, "
                    f"this acts-sql uses version {SCHEMA_VERSION}"
                )
            self.interrupted = self._recover(conn)
            self._ended = int(driver.query(conn, COUNT_ENDED)[0][0])
            self._ended -= self._prune(conn)

    def _recover(self, conn: Any) -> int:
        """Mark runs left in progress interrupted; keep their gap-free events."""
        driver, now = self._driver, time.time()
        unfinished = [row[0] for row in driver.query(conn, UNFINISHED)]
        for run_id in unfinished:
            seqs = [row[0] for row in driver.query(conn, EVENT_SEQS, (run_id,))]
            kept = next((i for i, seq in enumerate(seqs) if seq != i), len(seqs))
            driver.execute(conn, DELETE_EVENTS_FROM, (run_id, kept))
            row = (RunState.INTERRUPTED.value, now, kept, INTERRUPTED.model_dump_json(), run_id)
            driver.execute(conn, INTERRUPT, row)
        return len(unfinished)

    # -- writing (one thread) ----------------------------------------------------

    def write(self, ops: Sequence[Op]) -> None:
        """Write `ops` in one transaction (and apply the retention)."""
        created = [created_row(op.run) for op in ops if isinstance(op, Created)]
        events = [event_row(op.run_id, op.event) for op in ops if isinstance(op, Event)]
        ended = [op for op in ops if isinstance(op, Ended)]
        events += [event_row(op.run.id, e) for op in ended for e in op.events]
        conn, driver = self._writer(), self._driver
        with driver.transaction(conn, write=True):
            if created:
                driver.executemany(conn, INSERT_RUN, created)
            if events:
                driver.executemany(conn, INSERT_EVENT, events)
            if ended:
                rows = [ended_row(op.run, op.ending) for op in ended]
                driver.executemany(conn, END_RUN, rows)
            ended_now = self._ended + len(ended)
            ended_now -= self._prune(conn, ended_now)
        self._ended = ended_now

    def _writer(self) -> Any:
        if self._write_conn is None or not self._driver.usable(self._write_conn):
            self._write_conn = self._driver.connect()
        return self._write_conn

    def _prune(self, conn: Any, ended: int | None = None) -> int:
        """Delete the runs the retention says to; how many ended runs were deleted."""
        driver, keep = self._driver, self._retention
        ended = self._ended if ended is None else ended
        doomed: list[str] = []
        if ended > keep.max_runs:
            over = ended - keep.max_runs
            doomed += [row[0] for row in driver.query(conn, OLDEST_ENDED, (over,))]
        now = time.monotonic()
        if keep.max_age_s is not None and now - self._age_checked >= keep.age_check_s:
            self._age_checked = now
            cutoff = time.time() - keep.max_age_s
            doomed += [row[0] for row in driver.query(conn, CREATED_BEFORE, (cutoff,))]
        doomed = list(dict.fromkeys(doomed))
        if doomed:
            driver.executemany(conn, DELETE_EVENTS, [(run_id,) for run_id in doomed])
            driver.executemany(conn, DELETE_RUN, [(run_id,) for run_id in doomed])
        return len(doomed)

    # -- reading (any thread) ----------------------------------------------------

    def load(self, run_id: str) -> Run | None:
        """An ended run with its result and events; None if the store has no such run."""
        with self._reading() as conn:
            rows = self._driver.query(conn, GET_RUN, (run_id,))
            if not rows or rows[0][2] in ("queued", "running"):
                return None  # in progress: only its own process knows it
            row = rows[0]
            events = [e[0] for e in self._driver.query(conn, GET_EVENTS, (run_id, row[7]))]
        return run_from_row(row, events, row[9])

    def recent(self, limit: int) -> list[Run]:
        """The most recently created ended runs, newest first, by status only."""
        with self._reading() as conn:
            rows = self._driver.query(conn, RECENT, (limit,))
        return [run_from_row(row) for row in rows]

    @contextlib.contextmanager
    def _reading(self) -> Iterator[Any]:
        with self._read_lock:
            if self._read_conn is None or not self._driver.usable(self._read_conn):
                self._read_conn = self._driver.connect()
            with self._driver.transaction(self._read_conn, write=False):
                yield self._read_conn

    def close(self) -> None:
        for conn in (self._write_conn, self._read_conn):
            if conn is not None:
                with contextlib.suppress(*self._driver.errors):
                    conn.close()
        self._write_conn = self._read_conn = None
        self._driver.unlock()


def _schema() -> list[str]:
    text = resources.files("acts_sql.server.store").joinpath("schema.sql").read_text("utf-8")
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]
