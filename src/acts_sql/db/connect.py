"""Opening a database from a SQLAlchemy-style URL or a file path.

The URL scheme names the dialect (`Dialect.url_schemes`); each dialect has
one executor module with an `open_url(url, *, timeout, max_rows)` function
(and, where writes can be sandboxed, an `allow_writes` keyword). Modules are
imported only when used, so a missing driver matters only for its dialect.

    sqlite:///relative.db  sqlite:////abs.db  path/to/file.db  path/to/file.duckdb
    duckdb:///file.duckdb
    postgresql://user:pw@host:5432/db   (postgres, postgresql+psycopg)
    mysql://user:pw@host:3306/db        (mariadb, mysql+pymysql)
    mssql://user:pw@host:1433/db        (mssql+pymssql)
    oracle://user:pw@host:1521/service  (oracle+oracledb)
"""

from __future__ import annotations

import importlib
import inspect
import sqlite3
from contextlib import suppress
from pathlib import Path
from typing import Any

from acts_sql.db.executor import Executor
from acts_sql.db.sandbox import sweep_temp_dir
from acts_sql.db.sqlite import SQLiteExecutor
from acts_sql.db.url import DatabaseURL, has_scheme, parse_url
from acts_sql.errors import ActsSqlError, ConfigError, DatabaseOpenError
from acts_sql.sql.dialects import get_dialect

SQLITE_HEADER = b"SQLite format 3\x00"
DUCKDB_MAGIC = b"DUCK"
"""DuckDB files carry this at byte 8."""

EXECUTOR_MODULES: dict[str, tuple[str, str]] = {
    "postgresql": ("acts_sql.db.postgres", "postgres"),
    "mysql": ("acts_sql.db.mysql", "mysql"),
    "duckdb": ("acts_sql.db.duckdb_executor", "duckdb"),
    "sqlserver": ("acts_sql.db.mssql", "mssql"),
    "oracle": ("acts_sql.db.oracle", "oracle"),
}
"""Dialect -> (executor module, pip extra). SQLite is built in."""

SUPPORTED_SCHEMES = ("sqlite", "duckdb", "postgresql", "mysql", "mariadb", "mssql", "oracle")


def open_database(
    url: str,
    dialect: str | None = None,
    *,
    timeout: float | None = None,
    max_rows: int | None = None,
    allow_writes: bool = False,
) -> Executor:
    """An executor for `url` (see the module docstring), read-only unless `allow_writes`.

    `timeout` (seconds per statement; default 60, 15 for WITH RECURSIVE) and
    `max_rows` (default 10,000) become the executor's defaults.
    `allow_writes=True` makes the executor work on a throw-away copy of the
    database (dropped at close), never on the original. Raises
    DatabaseOpenError with a one-line reason (no password) when it cannot be
    opened, ConfigError for bad limits.
    """
    _check_limits(timeout, max_rows)
    text = url.strip()
    if not text:
        raise DatabaseOpenError("no database given", url=url)
    parsed = parse_url(text) if has_scheme(text) else _path_url(Path(text).expanduser())
    if dialect is not None:
        wanted = _dialect_name(dialect, parsed)
        if wanted != parsed.dialect:
            raise DatabaseOpenError(
                f"unsupported dialect {dialect!r} for {parsed.redacted()}, "
                f"which is {get_dialect(parsed.dialect).display_name}",
                url=parsed.redacted(),
                dialect=dialect,
            )
    if parsed.dialect == "sqlite":
        return _open_sqlite(parsed, timeout=timeout, max_rows=max_rows, allow_writes=allow_writes)
    return _open_module(parsed, text, timeout=timeout, max_rows=max_rows, allow_writes=allow_writes)


def sweep_orphans(url: str | None = None) -> list[str]:
    """Remove throw-away copies whose owner process is gone (killed before it could drop
    them): copy folders in the temp dir and, for a PostgreSQL or MySQL/MariaDB `url`, copy
    databases on its server. A copy of a live process, or one made on another host, is
    kept. Returns the names removed; never raises."""
    removed = [path.name for path in sweep_temp_dir()]
    text = (url or "").strip()
    with suppress(Exception):
        parsed = parse_url(text) if text and has_scheme(text) else None
        if parsed is not None and parsed.dialect in ("postgresql", "mysql"):
            module = importlib.import_module(EXECUTOR_MODULES[parsed.dialect][0])
            removed += module.sweep_orphans(parsed)
    return removed


def _check_limits(timeout: float | None, max_rows: int | None) -> None:
    if timeout is not None and (isinstance(timeout, bool) or not timeout > 0):
        raise ConfigError(f"timeout must be a positive number of seconds, got {timeout!r}")
    if max_rows is not None and (isinstance(max_rows, bool) or max_rows < 1):
        raise ConfigError(f"max_rows must be a positive integer, got {max_rows!r}")


def _dialect_name(dialect: str, parsed: DatabaseURL) -> str:
    try:
        return get_dialect(dialect).name
    except ConfigError as exc:
        raise DatabaseOpenError(
            f"unsupported dialect {dialect!r} for {parsed.redacted()}: {exc}",
            dialect=dialect,
        ) from None


def _path_url(path: Path) -> DatabaseURL:
    """A plain file path: SQLite unless the file is a DuckDB database."""
    check_file(path)
    with path.open("rb") as handle:
        head = handle.read(16)
    if head[8:12] == DUCKDB_MAGIC or (not head and path.suffix in (".duckdb", ".ddb")):
        return DatabaseURL(scheme="duckdb", dialect="duckdb", database=str(path))
    return DatabaseURL(scheme="sqlite", dialect="sqlite", database=str(path))


def _open_sqlite(
    parsed: DatabaseURL, *, timeout: float | None, max_rows: int | None, allow_writes: bool
) -> Executor:
    if not parsed.database:
        raise DatabaseOpenError(
            "SQLite URL needs a file path, as sqlite:///relative.db or sqlite:////abs.db",
            url=parsed.redacted(),
        )
    path = Path(parsed.database).expanduser()
    check_sqlite_file(path)
    try:
        executor = SQLiteExecutor(
            path, timeout=timeout, max_rows=max_rows, allow_writes=allow_writes
        )
    except sqlite3.Error as exc:
        raise DatabaseOpenError(
            f"cannot open SQLite database {path}: {exc}", path=str(path)
        ) from exc
    probe = executor.run_internal("SELECT count(*) FROM sqlite_master")
    if not probe.ok:
        executor.close()
        raise DatabaseOpenError(
            f"cannot read SQLite database {path}: {probe.error}", path=str(path)
        )
    return executor


def _open_module(
    parsed: DatabaseURL,
    text: str,
    *,
    timeout: float | None,
    max_rows: int | None,
    allow_writes: bool,
) -> Executor:
    module_name, extra = EXECUTOR_MODULES[parsed.dialect]
    spec = get_dialect(parsed.dialect)
    display = spec.display_name
    module = _import(module_name, display, extra)
    opener = getattr(module, "open_url", None)
    if opener is None:
        raise DatabaseOpenError(f"{module_name} has no open_url(); {display} cannot be opened")
    options: dict[str, Any] = {"timeout": timeout, "max_rows": max_rows}
    if allow_writes:
        if "allow_writes" not in inspect.signature(opener).parameters:
            raise DatabaseOpenError(
                f"writes cannot be sandboxed for {display} yet; open it read-only",
                dialect=parsed.dialect,
            )
        options["allow_writes"] = True
    target = parsed.database if spec.embedded else text
    try:
        executor: Executor = opener(target if target is not None else text, **options)
    except ActsSqlError:
        raise
    except ImportError as exc:
        raise DatabaseOpenError(
            f"{display} support needs its driver ({exc.name or exc}): "
            f"pip install 'acts-sql[{extra}]'",
            dialect=parsed.dialect,
        ) from None
    except Exception as exc:  # a driver error the module did not translate
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if parsed.password:
            reason = reason.replace(parsed.password, "***")
        raise DatabaseOpenError(
            f"cannot open {display} database {parsed.redacted()}: {reason}",
            url=parsed.redacted(),
        ) from None
    return executor


def _import(module_name: str, display: str, extra: str) -> Any:
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            raise DatabaseOpenError(
                f"{display} is not available in this build ({module_name} is missing)"
            ) from None
        raise DatabaseOpenError(
            f"{display} support needs its driver ({exc.name}): pip install 'acts-sql[{extra}]'"
        ) from None


def check_file(path: Path) -> None:
    """Raise DatabaseOpenError unless `path` is a readable file."""
    if not path.exists():
        raise DatabaseOpenError(f"database file not found: {path}", path=str(path))
    if path.is_dir():
        raise DatabaseOpenError(f"database path is a directory, not a file: {path}", path=str(path))
    try:
        with path.open("rb"):
            pass
    except OSError as exc:
        raise DatabaseOpenError(
            f"cannot read database file {path}: {exc.strerror or exc}", path=str(path)
        ) from exc


def check_sqlite_file(path: Path) -> None:
    """Raise DatabaseOpenError unless `path` is a readable SQLite database file."""
    check_file(path)
    with path.open("rb") as handle:
        header = handle.read(len(SQLITE_HEADER))
    if not header:
        raise DatabaseOpenError(f"not a SQLite database (empty file): {path}", path=str(path))
    if header != SQLITE_HEADER:
        raise DatabaseOpenError(
            f"not a SQLite database (no 'SQLite format 3' header): {path}", path=str(path)
        )
