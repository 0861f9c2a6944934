"""A fresh, empty database per task, one factory per dialect, dropped afterwards.

- SQLite: a private temporary directory; the job creates the file in it (twice:
  the official SQLite evaluator resets the database between its two phases).
- PostgreSQL: ``CREATE DATABASE`` from ``template0`` (UTF8; ICU ``en-US``
  collation where the server has ICU, closest to the official image's
  ``en_US.utf8``; time zone ``Asia/Hong_Kong`` as in the official container),
  dropped ``WITH (FORCE)`` so a killed job's sessions cannot block it.
- MySQL (MariaDB here): ``CREATE DATABASE`` with utf8mb4; leftover sessions are
  killed before ``DROP DATABASE``.

Names are unique per task (``bc_<db_id>_<random>``), so tasks run in parallel.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import sqlite3
import tempfile
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from acts_sql.bench.errors import DatabaseSetupError, EvaluatorSetupError, import_driver
from acts_sql.bench.jobs import DatabaseTarget
from acts_sql.bench.models import Dialect
from acts_sql.bench.servers import mysql_connect_kwargs, postgres_connect_kwargs

OFFICIAL_PG_TIMEZONE = "Asia/Hong_Kong"
_NAME_CHARS = re.compile(r"[^a-z0-9_]+")


def require_drivers(dialect: Dialect, modules: tuple[str, ...]) -> None:
    """EvaluatorSetupError naming the install command unless every driver module imports.

    A server dialect needs two drivers: the harness's (it creates and drops the
    per-task databases and runs the test cases) and the engine's (it runs the
    candidates). Checked once, before any task runs, so that a
    missing driver is one clear error and not one failed task per task.
    """
    for module in modules:
        import_driver(module, f"scoring {dialect.value} tasks", "bench")


def database_name(db_id: str) -> str:
    """A unique, safe database name for one task on ``db_id``."""
    base = _NAME_CHARS.sub("_", db_id.lower()).strip("_")[:30] or "db"
    return f"bc_{base}_{uuid.uuid4().hex[:10]}"


class FreshDatabase(Protocol):
    """One task's database: where it is, and how to get rid of it."""

    target: DatabaseTarget

    def drop(self) -> None: ...


class DatabaseFactory(Protocol):
    """Makes fresh databases for one dialect."""

    dialect: Dialect

    def check(self) -> None: ...

    def engine(self) -> str: ...

    def create(self, db_id: str) -> FreshDatabase: ...


class _Fresh:
    def __init__(self, target: DatabaseTarget, dropper: Any) -> None:
        self.target = target
        self._dropper = dropper
        self._dropped = False

    def drop(self) -> None:
        if not self._dropped:
            self._dropped = True
            self._dropper()


class SQLiteFactory:
    """Temporary files; nothing to connect to."""

    dialect = Dialect.SQLITE

    def __init__(self, root: Path | None = None) -> None:
        self.root = root

    def check(self) -> None:
        return None

    def engine(self) -> str:
        return f"SQLite {sqlite3.sqlite_version}"

    def create(self, db_id: str) -> FreshDatabase:
        directory = Path(tempfile.mkdtemp(prefix="bc_sqlite_", dir=self.root))
        safe = _NAME_CHARS.sub("_", db_id.lower()).strip("_") or "db"
        target = DatabaseTarget(dialect="SQLite", name=str(directory / f"{safe}.sqlite"))
        return _Fresh(target, lambda: shutil.rmtree(directory, ignore_errors=True))


class PostgresFactory:
    """Databases on a PostgreSQL server, created and dropped over an admin connection."""

    dialect = Dialect.POSTGRESQL
    drivers = ("psycopg2", "psycopg")

    def __init__(self, server_url: str, *, timezone: str | None = OFFICIAL_PG_TIMEZONE) -> None:
        self.server_url = server_url
        self.timezone = timezone
        self._icu: bool | None = None
        self._lock = threading.Lock()

    def _admin(self) -> Any:
        import psycopg2  # type: ignore[import-untyped]

        conn = psycopg2.connect(**postgres_connect_kwargs(self.server_url))
        conn.autocommit = True
        return conn

    def check(self) -> None:
        """EvaluatorSetupError unless the drivers import, and the server answers and lets us
        create databases."""
        require_drivers(self.dialect, self.drivers)
        import psycopg2

        try:
            conn = self._admin()
        except psycopg2.Error as exc:
            raise EvaluatorSetupError(f"cannot connect to the PostgreSQL server: {exc}") from None
        try:
            with conn.cursor() as cur:
                cur.execute(
                    "SELECT rolcreatedb OR rolsuper FROM pg_roles WHERE rolname = current_user"
                )
                row = cur.fetchone()
            if not row or not row[0]:
                raise EvaluatorSetupError("the PostgreSQL user may not create databases")
        finally:
            conn.close()

    def engine(self) -> str:
        return _server_version(self._admin)

    def _create_sql(self, name: str, icu: bool) -> str:
        locale = " LOCALE_PROVIDER icu ICU_LOCALE 'en-US'" if icu else ""
        return f"CREATE DATABASE \"{name}\" TEMPLATE template0 ENCODING 'UTF8'{locale}"

    def create(self, db_id: str) -> FreshDatabase:
        import psycopg2

        name = database_name(db_id)
        try:
            conn = self._admin()
        except psycopg2.Error as exc:
            raise DatabaseSetupError(f"cannot connect to the PostgreSQL server: {exc}") from None
        try:
            with conn.cursor() as cur:
                self._create(cur, name)
                if self.timezone:
                    cur.execute(f"ALTER DATABASE \"{name}\" SET timezone TO '{self.timezone}'")
        except psycopg2.Error as exc:
            raise DatabaseSetupError(f"cannot create database {name}: {exc}") from None
        finally:
            conn.close()
        target = DatabaseTarget(dialect="PostgreSQL", name=name, server_url=self.server_url)
        return _Fresh(target, lambda: self._drop(name))

    def _create(self, cur: Any, name: str) -> None:
        import psycopg2

        with self._lock:
            icu = self._icu
        if icu is not False:
            try:
                cur.execute(self._create_sql(name, icu=True))
                with self._lock:
                    self._icu = True
                return
            except psycopg2.Error:
                with self._lock:
                    self._icu = False
        cur.execute(self._create_sql(name, icu=False))

    def _drop(self, name: str) -> None:
        import psycopg2

        try:
            conn = self._admin()
            try:
                with conn.cursor() as cur:
                    cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            finally:
                conn.close()
        except psycopg2.Error as exc:
            raise DatabaseSetupError(f"cannot drop database {name}: {exc}") from None


class MySQLFactory:
    """Databases on a MySQL/MariaDB server."""

    dialect = Dialect.MYSQL
    drivers = ("pymysql",)
    CHARSETS = ("utf8mb4 COLLATE utf8mb4_unicode_520_ci", "utf8mb4")

    def __init__(self, server_url: str) -> None:
        self.server_url = server_url

    def _admin(self) -> Any:
        import pymysql  # type: ignore[import-untyped]

        kwargs = mysql_connect_kwargs(self.server_url, database="")
        kwargs.pop("database", None)
        return pymysql.connect(autocommit=True, **kwargs)

    def check(self) -> None:
        """EvaluatorSetupError unless the driver imports and the server answers."""
        require_drivers(self.dialect, self.drivers)
        import pymysql

        try:
            self._admin().close()
        except pymysql.Error as exc:
            raise EvaluatorSetupError(f"cannot connect to the MySQL server: {exc}") from None

    def engine(self) -> str:
        return _server_version(self._admin)

    def create(self, db_id: str) -> FreshDatabase:
        import pymysql

        name = database_name(db_id)
        try:
            conn = self._admin()
        except pymysql.Error as exc:
            raise DatabaseSetupError(f"cannot connect to the MySQL server: {exc}") from None
        try:
            with conn.cursor() as cur:
                last: Exception | None = None
                for charset in self.CHARSETS:
                    try:
                        cur.execute(f"CREATE DATABASE `{name}` CHARACTER SET {charset}")
                        last = None
                        break
                    except pymysql.Error as exc:
                        last = exc
                if last is not None:
                    raise DatabaseSetupError(f"cannot create database {name}: {last}")
        finally:
            conn.close()
        target = DatabaseTarget(dialect="MySQL", name=name, server_url=self.server_url)
        return _Fresh(target, lambda: self._drop(name))

    def _drop(self, name: str) -> None:
        import pymysql

        try:
            conn = self._admin()
            try:
                with conn.cursor() as cur:
                    cur.execute(
                        "SELECT id FROM information_schema.processlist "
                        "WHERE db = %s AND id <> CONNECTION_ID()",
                        (name,),
                    )
                    for (session,) in cur.fetchall():
                        with contextlib.suppress(pymysql.Error):
                            cur.execute(f"KILL {int(session)}")
                    cur.execute(f"DROP DATABASE IF EXISTS `{name}`")
            finally:
                conn.close()
        except pymysql.Error as exc:
            raise DatabaseSetupError(f"cannot drop database {name}: {exc}") from None


def _server_version(connect: Callable[[], Any]) -> str:
    """'PostgreSQL 15.8' / 'MariaDB 10.11.6' / 'MySQL 8.4.0', as the server reports it."""
    try:
        conn = connect()
        try:
            cur = conn.cursor()
            cur.execute("SELECT version()")
            row = cur.fetchone()
            cur.close()
        finally:
            conn.close()
    except Exception as exc:
        return f"unknown ({type(exc).__name__})"
    text = str(row[0]) if row else "?"
    if text.startswith("PostgreSQL"):
        return " ".join(text.split()[:2])
    if "mariadb" in text.lower():
        return f"MariaDB {text.split('-')[0]}"
    return f"MySQL {text}"
