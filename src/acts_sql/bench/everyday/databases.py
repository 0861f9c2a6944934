"""The databases of `bench everyday`: one per (dialect, schema), built from the fixtures,
removed afterwards.

SQLite and DuckDB: a file in a temporary directory. PostgreSQL: a fresh
database ``acts_everyday_<schema>_<random>`` on the server of the given URL
(a user that may create databases), dropped at the end even when the run
fails. The benchmark reads them through the ordinary read-only executors.
"""

from __future__ import annotations

import secrets
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from acts_sql.bench.errors import DatabaseSetupError, import_driver
from acts_sql.bench.everyday.cases import EverydayCase, fixture_statements
from acts_sql.errors import ConfigError

DatabaseKey = tuple[str, str]
"""(dialect, schema)."""


@contextmanager
def case_databases(
    cases: list[EverydayCase], pg_url: str | None
) -> Iterator[dict[DatabaseKey, str]]:
    """URLs of the databases the cases need, built on entry and removed on exit."""
    keys = sorted({(c.dialect, c.schema_name) for c in cases})
    if any(d == "postgresql" for d, _ in keys) and not pg_url:
        raise ConfigError(
            "PostgreSQL cases need a server: --pg-url postgresql://USER:PW@HOST:PORT/postgres "
            "(a user that may create databases) or ACTS_SQL_TEST_PG_URL; or leave them out "
            "with --dialect sqlite --dialect duckdb"
        )
    folder = Path(tempfile.mkdtemp(prefix="acts_everyday_"))
    with ExitStack() as stack:
        stack.callback(shutil.rmtree, folder, True)
        urls: dict[DatabaseKey, str] = {}
        for dialect, schema in keys:
            statements = fixture_statements(schema, dialect)
            if dialect == "postgresql":
                assert pg_url is not None
                urls[(dialect, schema)] = _postgres(stack, pg_url, schema, statements)
            else:
                path = folder / f"{schema}.{dialect}"
                _file_database(dialect, path, statements)
                urls[(dialect, schema)] = f"{dialect}:///{path}"
        yield urls


def _file_database(dialect: str, path: Path, statements: list[str]) -> None:
    if dialect == "sqlite":
        conn: Any = sqlite3.connect(path)
    else:
        duckdb: Any = import_driver("duckdb", "the everyday DuckDB cases", "duckdb")
        conn = duckdb.connect(str(path))
    try:
        for statement in statements:
            conn.execute(statement)
        conn.commit()
    finally:
        conn.close()


def with_database(url: str, name: str) -> str:
    """`url` with its database part replaced by `name`."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


def _postgres(stack: ExitStack, server_url: str, schema: str, statements: list[str]) -> str:
    psycopg: Any = import_driver("psycopg", "the everyday PostgreSQL cases", "postgres")
    name = f"acts_everyday_{schema}_{secrets.token_hex(4)}"
    admin_url = server_url.replace("postgresql+psycopg://", "postgresql://")
    try:
        with psycopg.connect(admin_url, autocommit=True, connect_timeout=10) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
    except psycopg.Error as exc:
        raise DatabaseSetupError(
            f"cannot create the database {name} on the PostgreSQL server of --pg-url "
            f"(a user that may create databases): {str(exc).strip()}"
        ) from None
    stack.callback(_drop_postgres, admin_url, name)
    url = with_database(admin_url, name)
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            for statement in statements:
                conn.execute(statement)
    except psycopg.Error as exc:
        raise DatabaseSetupError(f"cannot load the {schema} fixture into {name}: {exc}") from None
    return url


def _drop_postgres(admin_url: str, name: str) -> None:
    psycopg: Any = import_driver("psycopg", "the everyday PostgreSQL cases", "postgres")
    try:
        with psycopg.connect(admin_url, autocommit=True, connect_timeout=10) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    except psycopg.Error as exc:
        raise DatabaseSetupError(f"cannot drop the database {name}: {exc}") from None
