"""Which database server scores which dialect, and how to reach a database on it.

The evaluator needs a PostgreSQL server for PostgreSQL tasks and a MySQL or
MariaDB server for MySQL tasks (SQLite needs none). A server is named by URL:
the ``--pg-url`` / ``--mysql-url`` options, else ``ACTS_SQL_BENCH_PG_URL`` /
``ACTS_SQL_BENCH_MYSQL_URL``, else the test servers' ``ACTS_SQL_TEST_PG_URL`` /
``ACTS_SQL_TEST_MYSQL_URL``. The user must be allowed to create databases.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field

from acts_sql.bench.errors import EvaluatorSetupError
from acts_sql.bench.models import Dialect
from acts_sql.db.url import DatabaseURL, parse_url
from acts_sql.errors import DatabaseOpenError

SERVER_ENV = {
    Dialect.POSTGRESQL: ("ACTS_SQL_BENCH_PG_URL", "ACTS_SQL_TEST_PG_URL"),
    Dialect.MYSQL: ("ACTS_SQL_BENCH_MYSQL_URL", "ACTS_SQL_TEST_MYSQL_URL"),
}
URL_DIALECTS = {Dialect.POSTGRESQL: "postgresql", Dialect.MYSQL: "mysql"}
CONNECT_TIMEOUT_S = 10


class ServerURLs(BaseModel):
    """The servers available to the evaluator (None: that dialect cannot be scored here)."""

    model_config = ConfigDict(frozen=True)

    postgresql: str | None = Field(default=None, repr=False)
    mysql: str | None = Field(default=None, repr=False)

    @classmethod
    def resolve(cls, pg_url: str | None = None, mysql_url: str | None = None) -> ServerURLs:
        """Explicit URLs, else the environment (bench variables first, then the test ones)."""
        return cls(
            postgresql=pg_url or _from_env(Dialect.POSTGRESQL),
            mysql=mysql_url or _from_env(Dialect.MYSQL),
        )

    def for_dialect(self, dialect: str) -> str | None:
        if dialect == Dialect.POSTGRESQL:
            return self.postgresql
        if dialect == Dialect.MYSQL:
            return self.mysql
        return None


def _from_env(dialect: Dialect) -> str | None:
    for name in SERVER_ENV[dialect]:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None


def parse_server_url(url: str, dialect: Dialect) -> DatabaseURL:
    """The parsed URL; EvaluatorSetupError if it is not a URL of that dialect's server."""
    try:
        parsed = parse_url(url)
    except DatabaseOpenError as exc:
        raise EvaluatorSetupError(f"bad {dialect.value} server URL: {exc}") from None
    if parsed.dialect != URL_DIALECTS[dialect]:
        raise EvaluatorSetupError(
            f"a {dialect.value} server URL is needed, got a {parsed.dialect} one: "
            f"{parsed.redacted()}"
        )
    return parsed


def database_url(server_url: str, database: str) -> str:
    """The server URL with its database part replaced by ``database`` (credentials kept)."""
    parts = urlsplit(server_url.strip())
    return urlunsplit(parts._replace(path="/" + quote(database, safe="")))


def postgres_connect_kwargs(url: str, database: str | None = None) -> dict[str, Any]:
    """psycopg2.connect() keyword arguments for ``database`` (default: the URL's) on that server."""
    parsed = parse_server_url(url, Dialect.POSTGRESQL)
    kwargs: dict[str, Any] = {
        "dbname": database or parsed.database or "postgres",
        "connect_timeout": CONNECT_TIMEOUT_S,
    }
    for key, value in (
        ("host", parsed.host),
        ("port", parsed.port),
        ("user", parsed.username),
        ("password", parsed.password),
    ):
        if value is not None:
            kwargs[key] = value
    kwargs.update(parsed.query)
    return kwargs


def mysql_connect_kwargs(url: str, database: str | None = None) -> dict[str, Any]:
    """pymysql.connect() keyword arguments for ``database`` (default: the URL's) on that server."""
    parsed = parse_server_url(url, Dialect.MYSQL)
    kwargs: dict[str, Any] = {
        "host": parsed.host or "localhost",
        "port": parsed.port or 3306,
        "user": parsed.username or "root",
        "password": parsed.password or "",
        "charset": "utf8mb4",
        "connect_timeout": CONNECT_TIMEOUT_S,
    }
    name = database if database is not None else parsed.database
    if name:
        kwargs["database"] = name
    if "unix_socket" in parsed.query:
        kwargs["unix_socket"] = parsed.query["unix_socket"]
    return kwargs
