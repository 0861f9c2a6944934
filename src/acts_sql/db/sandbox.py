"""Throw-away copies of a database, for statements that must write.

The user's database is never written. When writes must be tried
(`allow_writes=True`: BIRD-CRITIC Management tasks, `--allow-writes`), the
executor works on a copy made here and drops it at `close()`; an `atexit`
hook drops copies still alive when the process ends.

Each engine's copy lives in its own module, with these helpers:

- PostgreSQL: `CREATE DATABASE <copy> TEMPLATE <original>` (`postgres.PostgresCopy`);
- MySQL/MariaDB: a scratch database on the same server; each table copied
  with `CREATE TABLE ... LIKE` + `INSERT ... SELECT`, then the views
  (`mysql.MySQLCopy`);
- SQLite and DuckDB: a file copy in a private temp dir (`FileCopy`, here;
  SQLite's executor passes its online-backup copier).
"""

from __future__ import annotations

import atexit
import os
import secrets
import shutil
import tempfile
import threading
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

COPY_PREFIX = "acts_sandbox_"
_cleanups: dict[int, Callable[[], None]] = {}
"""Live copies by id -> their drop function; emptied by close() or at exit."""
_cleanups_lock = threading.Lock()


def register_cleanup(drop: Callable[[], None]) -> int:
    """Remember `drop` so that it runs at exit if nobody ran it before; returns a handle."""
    handle = id(drop)
    with _cleanups_lock:
        _cleanups[handle] = drop
    return handle


def unregister_cleanup(handle: int) -> None:
    with _cleanups_lock:
        _cleanups.pop(handle, None)


@atexit.register
def drop_all_copies() -> None:
    """Drop every copy still alive (at interpreter exit)."""
    with _cleanups_lock:
        pending = list(_cleanups.values())
        _cleanups.clear()
    for drop in pending:
        with suppress(Exception):
            drop()


def copy_name() -> str:
    """A fresh, unguessable name for a copy: acts_sandbox_<pid>_<hex>."""
    return f"{COPY_PREFIX}{os.getpid()}_{secrets.token_hex(4)}"


class FileCopy:
    """A copy of a database file in a private temp dir, deleted by `drop()`.

    `copier(src, dst)` makes the copy (default: `shutil.copyfile`); SQLite
    uses its online backup API so a database being written is copied
    consistently.
    """

    def __init__(self, source: Path, copier: Callable[[Path, Path], None] | None = None) -> None:
        self.source = Path(source)
        self.dir = Path(tempfile.mkdtemp(prefix=f"acts-sql-sandbox-{os.getpid()}-"))
        self.path = self.dir / self.source.name
        try:
            (copier or _copy_file)(self.source, self.path)
        except Exception:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise
        self._handle = register_cleanup(self.drop)

    def drop(self) -> None:
        unregister_cleanup(self._handle)
        shutil.rmtree(self.dir, ignore_errors=True)


def _copy_file(source: Path, target: Path) -> None:
    shutil.copyfile(source, target)
    for suffix in (".wal",):  # DuckDB keeps uncheckpointed changes beside the file
        side = source.with_name(source.name + suffix)
        if side.exists():
            shutil.copyfile(side, target.with_name(target.name + suffix))
