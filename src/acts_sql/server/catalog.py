"""What runs may use: the configured databases and the LLM backend.

`DatabaseCatalog` opens only configured databases, by name, each with its
dialect (checked at start-up) and write mode. `BackendFactory` makes the LLM
backend for one run: a scripted backend is stateful (it replays its replies
in order), so each run gets a fresh one; other backends are shared.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from acts_sql.db.connect import open_database, sweep_orphans
from acts_sql.db.executor import Executor
from acts_sql.errors import ConfigError, DatabaseOpenError
from acts_sql.llm.base import LLMBackend
from acts_sql.llm.spec import parse_llm_spec
from acts_sql.server.config import DatabaseConfig, LLMConfig
from acts_sql.server.errors import ApiError, ErrorCode
from acts_sql.sql.dialects import get_dialect


class DatabaseCatalog:
    """The configured databases, by name; clients can reach no other."""

    def __init__(self, databases: dict[str, DatabaseConfig]) -> None:
        self._databases = dict(databases)
        self._dialects: dict[str, str] = {
            name: db.dialect for name, db in databases.items() if db.dialect
        }

    @property
    def names(self) -> list[str]:
        return sorted(self._databases)

    def check(self) -> None:
        """Open each database once (read-only) to learn its dialect; DatabaseOpenError if not."""
        for name, db in self._databases.items():
            try:
                executor = open_database(db.url, db.dialect, timeout=db.timeout)
            except DatabaseOpenError as exc:
                raise DatabaseOpenError(f"database {name!r}: {exc}", database=name) from None
            try:
                self._dialects[name] = get_dialect(executor.dialect).name
            finally:
                executor.close()

    def sweep(self) -> list[str]:
        """Remove the throw-away copies that dead processes left: in the temp dir, and on
        the server of each database with writes on a copy. Returns the names removed."""
        removed = sweep_orphans()
        for db in self._databases.values():
            if db.writes == "copy":
                removed += sweep_orphans(db.url)
        return removed

    def resolve(self, name: str, dialect: str | None) -> str:
        """The database's dialect; ApiError for an unknown name or a dialect that does not fit."""
        if name not in self._databases:
            raise ApiError(
                ErrorCode.UNKNOWN_DATABASE,
                f"no database named {name!r} is configured on this service",
            )
        actual = self._dialects.get(name)
        if dialect is not None:
            try:
                wanted = get_dialect(dialect).name
            except ConfigError:
                raise ApiError(ErrorCode.DIALECT_MISMATCH, f"unknown dialect {dialect!r}") from None
            if actual is not None and wanted != actual:
                raise ApiError(
                    ErrorCode.DIALECT_MISMATCH,
                    f"dialect {wanted!r} does not match database {name!r}, which is {actual!r}",
                )
        return actual or ""

    def open(self, name: str) -> Executor:
        """A new executor for the configured database `name` (read-only, or on a copy)."""
        db = self._databases[name]
        return open_database(
            db.url,
            db.dialect,
            timeout=db.timeout,
            max_rows=db.max_rows,
            allow_writes=db.writes == "copy",
        )


class BackendFactory:
    """Makes the LLM backend of each run from the configured SPEC."""

    def __init__(self, config: LLMConfig, make: Callable[[], LLMBackend] | None = None) -> None:
        self.config = config
        self._make = make or (lambda: parse_llm_spec(config.spec, **config.options()))
        self._shared: LLMBackend | None = None
        self._lock = threading.Lock()
        self._per_run = config.scheme == "scripted"

    def check(self) -> None:
        """Build one backend now, so that a bad SPEC stops the start (LLMSpecError)."""
        backend = self._make()
        if not self._per_run:
            with self._lock:
                self._shared = backend

    def __call__(self) -> LLMBackend:
        if self._per_run:
            return self._make()
        with self._lock:
            if self._shared is None:
                self._shared = self._make()
            return self._shared
