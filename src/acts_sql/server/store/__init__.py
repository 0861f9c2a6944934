"""Where runs are kept across restarts: a SQLite file or a PostgreSQL database.

`open_store(config)` opens the configured store (None for ``url = "memory"``:
runs then live in the registry only); `RunJournal` writes runs to it from a
background thread. See docs/SERVICE.md, "Runs across restarts".
"""

from __future__ import annotations

from pathlib import Path

from acts_sql.db.url import parse_url
from acts_sql.errors import ConfigError, DatabaseOpenError
from acts_sql.server.config import DEFAULT_CONFIG_NAME, StoreConfig
from acts_sql.server.store.journal import RunJournal
from acts_sql.server.store.sql import Driver, Retention, SqlRunStore
from acts_sql.server.store.sqlite import SQLiteDriver

__all__ = ["Retention", "RunJournal", "SqlRunStore", "open_store"]


def open_store(config: StoreConfig) -> SqlRunStore | None:
    """The configured store, open; ConfigError (one line) when it cannot be opened."""
    if config.kind == "memory":
        return None
    retention = Retention(max_runs=config.max_runs, max_age_s=config.max_age_s)
    return SqlRunStore.open(_driver(config), retention)


def _driver(config: StoreConfig) -> Driver:
    try:
        if config.kind == "postgresql" and config.url is not None:
            from acts_sql.server.store.postgres import PostgresDriver  # imports psycopg

            return PostgresDriver(config.url)
        if config.url is not None:
            path = parse_url(config.url).database
            if not path:
                raise ConfigError("store: a SQLite store needs a file, as sqlite:///runs.sqlite")
            return SQLiteDriver(Path(path).absolute())
    except DatabaseOpenError as exc:
        raise ConfigError(f"store: {exc}") from None
    path = config.path or config.located(Path(DEFAULT_CONFIG_NAME)).path
    assert path is not None  # located() gives a SQLite store its file
    return SQLiteDriver(Path(path))
