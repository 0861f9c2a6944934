"""The PostgreSQL run store's connections (psycopg 3): one service per database.

Statements are written with ``?`` placeholders (as for SQLite) and given to
psycopg with ``%s``. A session advisory lock, held on a connection of its
own for the life of the store, keeps a second `acts-sql serve` from using
the same database's run tables; PostgreSQL drops it when the process dies
(its connections close), so a restart after ``kill -9`` waits a moment for
it at most `LOCK_WAIT_S`.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Iterator, Sequence
from typing import Any

from acts_sql.db.postgres import connect
from acts_sql.db.url import parse_url
from acts_sql.errors import ConfigError, DatabaseOpenError

LOCK_KEY = 0x61637473_73716C31
"""The advisory lock that says "a service uses this database's run store" ('actssql1')."""
LOCK_WAIT_S = 10.0
LOCK_POLL_S = 0.2


@functools.lru_cache(maxsize=64)
def _pg(sql: str) -> str:
    return sql.replace("?", "%s")


def _driver_errors() -> tuple[type[BaseException], ...]:
    try:
        import psycopg
    except ImportError:  # pragma: no cover - exercised only without the extra
        return (DatabaseOpenError,)
    return (psycopg.Error, DatabaseOpenError)


class PostgresDriver:
    """Connections to one PostgreSQL database; see the module docstring."""

    def __init__(self, url: str) -> None:
        self._url = parse_url(url)
        self.description = self._url.redacted()
        self.errors = _driver_errors()
        self._lock_conn: Any = None

    def lock(self) -> None:
        """Take the store for this process; ConfigError when another one keeps it."""
        conn = connect(self._url)
        deadline = time.monotonic() + LOCK_WAIT_S
        while not conn.execute("SELECT pg_try_advisory_lock(%s)", (LOCK_KEY,)).fetchone()[0]:
            if time.monotonic() > deadline:
                conn.close()
                raise ConfigError(
                    f"store {self.description}: in use by another acts-sql serve "
                    f"(it holds advisory lock {LOCK_KEY})"
                )
            time.sleep(LOCK_POLL_S)
        self._lock_conn = conn

    def unlock(self) -> None:
        if self._lock_conn is not None:
            with contextlib.suppress(*self.errors):
                self._lock_conn.close()  # the session's advisory lock goes with it
            self._lock_conn = None

    def connect(self) -> Any:
        return connect(self._url)

    def usable(self, conn: Any) -> bool:
        return not (conn.closed or conn.broken)

    @contextlib.contextmanager
    def transaction(self, conn: Any, *, write: bool) -> Iterator[None]:
        with conn.transaction():
            yield

    def query(self, conn: Any, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return list(conn.execute(_pg(sql), params).fetchall())

    def execute(self, conn: Any, sql: str, params: Sequence[Any] = ()) -> None:
        conn.execute(_pg(sql), params)

    def executemany(self, conn: Any, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        with conn.cursor() as cursor:
            cursor.executemany(_pg(sql), rows)
