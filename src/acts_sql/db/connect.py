"""Opening a database from a URL or a file path."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from acts_sql.db.executor import Executor
from acts_sql.db.sqlite import SQLiteExecutor
from acts_sql.errors import DatabaseOpenError

SQLITE_HEADER = b"SQLite format 3\x00"
SUPPORTED_SCHEMES = ("sqlite",)
_SQLITE_DIALECTS = {"sqlite", "sqlite3"}
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")


def open_database(url: str, dialect: str | None = None) -> Executor:
    """An executor for ``url``: ``sqlite:///rel.db``, ``sqlite:////abs.db`` or a file path.

    Raises DatabaseOpenError with a one-line reason when it cannot be opened.
    """
    text = url.strip()
    if not text:
        raise DatabaseOpenError("no database given", url=url)
    match = _SCHEME.match(text)
    if match:
        scheme = match.group(1).lower()
        driver = scheme.split("+", 1)[0]
        if driver not in SUPPORTED_SCHEMES:
            raise DatabaseOpenError(
                f"unsupported database URL scheme {scheme!r} "
                f"(supported now: {', '.join(s + '://' for s in SUPPORTED_SCHEMES)})",
                url=url,
                scheme=scheme,
            )
        path = _sqlite_url_path(text, url)
    else:
        path = Path(text).expanduser()
    if dialect is not None and dialect.strip().lower() not in _SQLITE_DIALECTS:
        raise DatabaseOpenError(
            f"unsupported dialect {dialect!r} for {url!r} (supported now: sqlite)",
            url=url,
            dialect=dialect,
        )
    check_sqlite_file(path)
    try:
        executor = SQLiteExecutor(path)
    except sqlite3.Error as exc:
        raise DatabaseOpenError(f"cannot open SQLite database {path}: {exc}", url=url) from exc
    probe = executor.execute("SELECT count(*) FROM sqlite_master")
    if not probe.ok:
        executor.close()
        raise DatabaseOpenError(f"cannot read SQLite database {path}: {probe.error}", url=url)
    return executor


def _sqlite_url_path(text: str, url: str) -> Path:
    """The file of a ``sqlite:///...`` URL (three slashes: relative, four: absolute)."""
    rest = text.split("://", 1)[1]
    rest = rest.split("?", 1)[0]
    if not rest.startswith("/") or rest == "/":
        raise DatabaseOpenError(
            f"SQLite URL needs a file path, as sqlite:///relative.db or sqlite:////abs.db: {url}",
            url=url,
        )
    return Path(rest[1:]).expanduser()


def check_sqlite_file(path: Path) -> None:
    """Raise DatabaseOpenError unless ``path`` is a readable SQLite database file."""
    if not path.exists():
        raise DatabaseOpenError(f"database file not found: {path}", path=str(path))
    if path.is_dir():
        raise DatabaseOpenError(f"database path is a directory, not a file: {path}", path=str(path))
    try:
        with path.open("rb") as handle:
            header = handle.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise DatabaseOpenError(
            f"cannot read database file {path}: {exc.strerror or exc}", path=str(path)
        ) from exc
    if not header:
        raise DatabaseOpenError(f"not a SQLite database (empty file): {path}", path=str(path))
    if header != SQLITE_HEADER:
        raise DatabaseOpenError(
            f"not a SQLite database (no 'SQLite format 3' header): {path}", path=str(path)
        )
