"""Checksums of every user table, read with the raw drivers (not acts-sql's executors).

A checksum covers the table list, each table's column names and types, and
its rows (sorted, so row order does not matter). Used before and after every
integration test: acts-sql must never change the user's data.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path
from typing import Any

import psycopg
import pymysql

from acts_sql.db.url import parse_url

SANDBOX_PREFIX = "acts_sandbox_"


def _digest(rows: list[tuple[Any, ...]]) -> str:
    lines = sorted(repr(tuple(row)) for row in rows)
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]


def sqlite_checksums(path: Path) -> dict[str, str]:
    conn = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
    try:
        names = [
            name
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name"
            )
        ]
        sums = {}
        for name in names:
            columns = conn.execute(f'PRAGMA table_info("{name}")').fetchall()
            rows = conn.execute(f'SELECT * FROM "{name}"').fetchall()
            sums[name] = _digest(columns) + _digest(rows)
        return sums
    finally:
        conn.close()


def pg_checksums(url: str) -> dict[str, str]:
    conn = psycopg.connect(url, autocommit=True)
    try:
        names = conn.execute(
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2"
        ).fetchall()
        sums = {}
        for schema, name in names:
            columns = conn.execute(
                "SELECT column_name, data_type, is_nullable, column_default "
                "FROM information_schema.columns WHERE table_schema = %s AND table_name = %s",
                (schema, name),
            ).fetchall()
            indexes = conn.execute(
                "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = %s "
                "AND tablename = %s",
                (schema, name),
            ).fetchall()
            rows = conn.execute(f'SELECT * FROM "{schema}"."{name}"').fetchall()
            sums[f"{schema}.{name}"] = _digest(columns) + _digest(indexes) + _digest(rows)
        return sums
    finally:
        conn.close()


def pg_databases(url: str) -> list[str]:
    admin = parse_url(url).model_copy(update={"database": "postgres"})
    conn = psycopg.connect(
        host=admin.host,
        port=admin.port,
        user=admin.username,
        password=admin.password,
        dbname="postgres",
        autocommit=True,
    )
    try:
        return [name for (name,) in conn.execute("SELECT datname FROM pg_database").fetchall()]
    finally:
        conn.close()


def mysql_connect(url: str, database: str | None = None) -> Any:
    parsed = parse_url(url)
    return pymysql.connect(
        host=parsed.host,
        port=parsed.port,
        user=parsed.username,
        password=parsed.password or "",
        database=database if database is not None else parsed.database,
        autocommit=True,
    )


def mysql_checksums(url: str) -> dict[str, str]:
    database = parse_url(url).database
    conn = mysql_connect(url)
    try:
        with conn.cursor() as cursor:
            cursor.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s "
                "ORDER BY table_name",
                (database,),
            )
            names = [name for (name,) in cursor.fetchall()]
            sums = {}
            for name in names:
                cursor.execute(
                    "SELECT column_name, column_type, is_nullable, column_default "
                    "FROM information_schema.columns WHERE table_schema = %s AND table_name = %s",
                    (database, name),
                )
                columns = list(cursor.fetchall())
                cursor.execute(
                    "SELECT index_name, column_name, seq_in_index "
                    "FROM information_schema.statistics "
                    "WHERE table_schema = %s AND table_name = %s",
                    (database, name),
                )
                indexes = list(cursor.fetchall())
                cursor.execute(f"SELECT * FROM `{name}`")
                rows = list(cursor.fetchall())
                sums[name] = _digest(columns) + _digest(indexes) + _digest(rows)
            return sums
    finally:
        conn.close()


def mysql_databases(url: str) -> list[str]:
    conn = mysql_connect(url, database="")
    try:
        with conn.cursor() as cursor:
            cursor.execute("SHOW DATABASES")
            return [name for (name,) in cursor.fetchall()]
    finally:
        conn.close()
