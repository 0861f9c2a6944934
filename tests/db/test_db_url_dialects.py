"""Database URLs and the dialect fields that executors read (schemes, timeouts, reflection)."""

from __future__ import annotations

import sqlite3

import duckdb
import pytest
import sqlglot

from acts_sql.db.url import known_schemes, parse_url, scheme_dialect
from acts_sql.errors import DatabaseOpenError
from acts_sql.sql.dialects import all_dialects, get_dialect


@pytest.mark.parametrize(
    ("scheme", "dialect"),
    [
        ("postgresql", "postgresql"),
        ("postgres", "postgresql"),
        ("postgresql+psycopg", "postgresql"),
        ("mysql", "mysql"),
        ("mariadb", "mysql"),
        ("mysql+pymysql", "mysql"),
        ("mssql", "sqlserver"),
        ("mssql+pymssql", "sqlserver"),
        ("oracle", "oracle"),
        ("oracle+oracledb", "oracle"),
        ("duckdb", "duckdb"),
        ("sqlite", "sqlite"),
    ],
)
def test_every_scheme_names_its_dialect(scheme: str, dialect: str) -> None:
    found = scheme_dialect(scheme)
    assert found is not None and found.name == dialect


def test_schemes_are_unique() -> None:
    schemes = known_schemes()
    assert len(schemes) == len(set(schemes))


def test_server_url_parts_and_redaction() -> None:
    url = parse_url("postgresql+psycopg://ann:p%40ss%3Aword@db.example:6543/shop?sslmode=require")
    assert (url.dialect, url.username, url.password) == ("postgresql", "ann", "p@ss:word")
    assert (url.host, url.port, url.database) == ("db.example", 6543, "shop")
    assert url.query == {"sslmode": "require"}
    assert url.redacted() == "postgresql+psycopg://ann@db.example:6543/shop"
    assert "p@ss" not in repr(url)


def test_default_ports_and_ipv6() -> None:
    assert parse_url("mysql://u@h/db").port == 3306
    assert parse_url("mssql://u@h/db").port == 1433
    assert parse_url("oracle://u@h/XEPDB1").port == 1521
    assert parse_url("postgresql://[::1]:5433/db").host == "::1"
    assert parse_url("postgresql://[::1]:5433/db").endpoint() == "[::1]:5433"


def test_embedded_paths() -> None:
    assert parse_url("sqlite:///rel/x.db").database == "rel/x.db"
    assert parse_url("sqlite:////abs/x.db").database == "/abs/x.db"
    assert parse_url("duckdb:///data.duckdb").database == "data.duckdb"
    assert parse_url("duckdb://").database == ""  # in memory


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("mongodb://u:secret@h/db", "unsupported database URL scheme"),
        ("postgresql://u:secret@h:99999/db", "bad port"),
        ("postgresql://u:secret@h:abc/db", "bad port"),
        ("postgresql://u:secret@[::1/db", "bad IPv6"),
        ("duckdb:relative", "not a database URL"),
    ],
)
def test_bad_urls_never_echo_the_password(url: str, words: str) -> None:
    with pytest.raises(DatabaseOpenError) as caught:
        parse_url(url)
    assert words in str(caught.value)
    assert "secret" not in str(caught.value) and "\n" not in str(caught.value)


def test_every_dialect_declares_what_executors_need() -> None:
    for dialect in all_dialects():
        assert dialect.url_schemes, dialect.name
        assert dialect.reflection is not None, dialect.name
        assert (dialect.default_port is None) == dialect.embedded, dialect.name
        if dialect.timeout_method == "sql":
            assert dialect.timeout_sql, dialect.name


@pytest.mark.parametrize("dialect", [d.name for d in all_dialects()])
def test_reflection_queries_parse_in_their_dialect(dialect: str) -> None:
    d = get_dialect(dialect)
    assert d.reflection is not None
    for query in (d.reflection.tables, d.reflection.columns, d.reflection.keys):
        tree = sqlglot.parse_one(query, dialect=d.sqlglot_name)
        assert isinstance(tree, sqlglot.exp.Query)


def test_timeout_statements() -> None:
    assert get_dialect("postgresql").timeout_statements(1.5) == ["SET statement_timeout = 1500"]
    assert get_dialect("mysql").timeout_statements(2) == [
        "SET SESSION max_statement_time = 2",
        "SET SESSION max_execution_time = 2000",
    ]
    assert get_dialect("postgresql").timeout_statements(0.0001) == ["SET statement_timeout = 1"]
    assert get_dialect("sqlite").timeout_statements(1) == []  # progress handler
    assert get_dialect("sqlserver").timeout_method == "driver"
    assert get_dialect("oracle").timeout_method == "call_timeout"
    assert get_dialect("duckdb").timeout_method == "interrupt"


SHOP = [
    "CREATE TABLE a (id INTEGER PRIMARY KEY, x VARCHAR NOT NULL)",
    "CREATE TABLE b (id INTEGER PRIMARY KEY, a_id INTEGER REFERENCES a (id))",
    "CREATE VIEW v AS SELECT * FROM a",
]


def _rows(run: object, dialect: str) -> dict[str, list[tuple[object, ...]]]:
    queries = get_dialect(dialect).reflection
    assert queries is not None
    return {
        "tables": run(queries.tables),  # type: ignore[operator]
        "columns": run(queries.columns),  # type: ignore[operator]
        "keys": run(queries.keys),  # type: ignore[operator]
    }


@pytest.mark.parametrize("dialect", ["sqlite", "duckdb"])
def test_reflection_queries_run_on_embedded_engines(dialect: str) -> None:
    conn = sqlite3.connect(":memory:") if dialect == "sqlite" else duckdb.connect()
    for statement in SHOP:
        conn.execute(statement)
    found = _rows(lambda q: [tuple(r) for r in conn.execute(q).fetchall()], dialect)
    assert [(t[1], t[2]) for t in found["tables"]] == [
        ("a", "table"),
        ("b", "table"),
        ("v", "view"),
    ]
    columns = [(c[1], c[2], c[5]) for c in found["columns"]]
    assert ("a", "x", 2) in columns and ("v", "id", 1) in columns
    keys = {(k[1], k[3], k[4], k[7], k[8]) for k in found["keys"]}
    assert ("b", "FOREIGN KEY", "a_id", "a", "id") in keys
    assert ("a", "PRIMARY KEY", "id", None, None) in keys
