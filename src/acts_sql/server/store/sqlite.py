"""The SQLite run store's connections: one file, WAL journal, one service at a time.

The file is created (mode 0600: runs hold SQL and results) with its
directory. A lock file next to it (``<file>.lock``, `flock`) keeps a second
`acts-sql serve` from using the same store: it would mark this one's runs
interrupted and delete them by its own retention. The operating system
drops the lock when the process dies, ``kill -9`` included.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from acts_sql.errors import ConfigError

BUSY_TIMEOUT_S = 10.0


class SQLiteDriver:
    """Connections to one SQLite file; see the module docstring."""

    errors: tuple[type[BaseException], ...] = (sqlite3.Error, OSError)

    def __init__(self, path: Path) -> None:
        self.path = path
        self.description = f"sqlite:///{path}"
        self._lock_fd: int | None = None

    def lock(self) -> None:
        """Take the store for this process; ConfigError when another one has it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(f"{self.path}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise ConfigError(
                f"store {self.description}: in use by another acts-sql serve "
                f"(it holds {self.path}.lock)"
            ) from None
        self._lock_fd = fd
        if not self.path.exists():
            os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))

    def unlock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing the descriptor releases the flock
            self._lock_fd = None

    def connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
        )
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")  # WAL: durable across process crashes
        return conn

    def usable(self, conn: Any) -> bool:
        return True

    @contextlib.contextmanager
    def transaction(self, conn: Any, *, write: bool) -> Iterator[None]:
        conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        try:
            yield
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def query(self, conn: Any, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return list(conn.execute(sql, params).fetchall())

    def execute(self, conn: Any, sql: str, params: Sequence[Any] = ()) -> None:
        conn.execute(sql, params)

    def executemany(self, conn: Any, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        conn.executemany(sql, rows)
