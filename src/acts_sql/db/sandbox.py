"""Throw-away copies of a database, for statements that must write.

The user's database is never written. When writes must be tried
(`allow_writes=True`: BIRD-CRITIC Management tasks, `--allow-writes`), the
executor works on a copy made here and drops it at `close()`; an `atexit`
hook drops copies still alive when the process ends.

- PostgreSQL: `CREATE DATABASE <copy> TEMPLATE <original>`, in the engine's
  own module (`acts_sql.db.postgres.PostgresCopy`), with these helpers.
- MySQL/MariaDB: a scratch database on the same server; each table copied
  with `CREATE TABLE ... LIKE` + `INSERT ... SELECT`, then the views.
- SQLite and DuckDB: a file copy in a private temp dir (`FileCopy`; DuckDB's
  executor uses it too).
"""

from __future__ import annotations

import atexit
import os
import re
import secrets
import shutil
import sqlite3
import tempfile
import threading
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

from acts_sql.errors import DatabaseOpenError

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


def sqlite_backup(source: Path, target: Path) -> None:
    """Copy a SQLite database with the online backup API (read-only on the source)."""
    src = sqlite3.connect(source.resolve().as_uri() + "?mode=ro", uri=True)
    dst = sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()


# ---------------------------------------------------------------- MySQL / MariaDB


class MySQLCopy:
    """A scratch database with copies of the original's tables and views."""

    def __init__(self, conn: Any, source: str) -> None:
        self.source = source
        self.name = copy_name()
        self._conn = conn
        self._run(f"CREATE DATABASE {_my_quote(self.name)}")
        self._handle = register_cleanup(self.drop)
        try:
            self._copy_tables()
            self._copy_foreign_keys()
            self._copy_views()
        except Exception as exc:
            self.drop()
            raise DatabaseOpenError(
                f"cannot copy MySQL database {source!r} for the sandbox: {exc}"
            ) from None

    def _run(self, sql: str, args: Any = None) -> list[tuple[Any, ...]]:
        with self._conn.cursor() as cursor:
            cursor.execute(sql, args)
            return list(cursor.fetchall())

    def _copy_tables(self) -> None:
        src, dst = _my_quote(self.source), _my_quote(self.name)
        tables = self._run(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = %s AND table_type = 'BASE TABLE' ORDER BY table_name",
            (self.source,),
        )
        self._run("SET SESSION foreign_key_checks = 0")
        try:
            for (table,) in tables:
                name = _my_quote(table)
                self._run(f"CREATE TABLE {dst}.{name} LIKE {src}.{name}")
                columns = self._run(
                    "SELECT column_name FROM information_schema.columns "
                    "WHERE table_schema = %s AND table_name = %s "
                    "AND extra NOT LIKE '%%GENERATED%%' "
                    "AND extra NOT IN ('VIRTUAL', 'PERSISTENT', 'STORED') "
                    "ORDER BY ordinal_position",
                    (self.source, table),
                )
                cols = ", ".join(_my_quote(col) for (col,) in columns)
                self._run(f"INSERT INTO {dst}.{name} ({cols}) SELECT {cols} FROM {src}.{name}")
        finally:
            self._run("SET SESSION foreign_key_checks = 1")

    def _copy_foreign_keys(self) -> None:
        """CREATE TABLE ... LIKE leaves foreign keys out: add them to the copies."""
        rows = self._run(
            "SELECT k.table_name, k.constraint_name, k.column_name, k.referenced_table_name, "
            "k.referenced_column_name, r.update_rule, r.delete_rule "
            "FROM information_schema.key_column_usage AS k "
            "JOIN information_schema.referential_constraints AS r "
            "ON r.constraint_schema = k.constraint_schema "
            "AND r.constraint_name = k.constraint_name AND r.table_name = k.table_name "
            "WHERE k.table_schema = %s AND k.referenced_table_schema = k.table_schema "
            "ORDER BY k.table_name, k.constraint_name, k.ordinal_position",
            (self.source,),
        )
        keys: dict[tuple[str, str], list[tuple[Any, ...]]] = {}
        for row in rows:
            keys.setdefault((str(row[0]), str(row[1])), []).append(row)
        dst = _my_quote(self.name)
        self._run("SET SESSION foreign_key_checks = 0")
        try:
            for (table, name), parts in keys.items():
                cols = ", ".join(_my_quote(str(p[2])) for p in parts)
                refs = ", ".join(_my_quote(str(p[4])) for p in parts)
                target = _my_quote(str(parts[0][3]))
                self._run(
                    f"ALTER TABLE {dst}.{_my_quote(table)} ADD CONSTRAINT {_my_quote(name)} "
                    f"FOREIGN KEY ({cols}) REFERENCES {dst}.{target} ({refs}) "
                    f"ON UPDATE {parts[0][5]} ON DELETE {parts[0][6]}"
                )
        finally:
            self._run("SET SESSION foreign_key_checks = 1")

    def _copy_views(self) -> None:
        views = self._run(
            "SELECT table_name, view_definition FROM information_schema.views "
            "WHERE table_schema = %s",
            (self.source,),
        )
        source_prefix = re.compile(re.escape(_my_quote(self.source)) + r"\.")
        target_prefix = _my_quote(self.name).replace("\\", "\\\\") + "."
        pending = {str(view): str(body) for view, body in views}
        while pending:
            failed: dict[str, str] = {}
            for view, body in pending.items():
                select = source_prefix.sub(target_prefix, body)
                try:
                    self._run(f"CREATE VIEW {_my_quote(self.name)}.{_my_quote(view)} AS {select}")
                except Exception:
                    failed[view] = body  # it may use a view not made yet
            if len(failed) == len(pending):
                raise DatabaseOpenError(f"cannot copy views: {', '.join(failed)}")
            pending = failed

    def drop(self) -> None:
        unregister_cleanup(self._handle)
        with suppress(Exception):
            self._run(f"DROP DATABASE IF EXISTS {_my_quote(self.name)}")
        with suppress(Exception):
            self._conn.close()


def _my_quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"
