"""Schema reflection from the dialect's catalog queries (`Dialect.reflection`).

One reader for every server dialect: list the user tables and views, their
columns and keys, reconstruct a CREATE TABLE per table (columns, types, NOT
NULL, primary key, foreign keys), read a few sample rows and a row count
(the catalog's estimate for big tables, an exact count for small ones).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Protocol

from pydantic import BaseModel, Field
from sqlglot import exp

from acts_sql.db.executor import ColumnInfo, TableInfo
from acts_sql.db.result import ExecResult
from acts_sql.sql.dialects import Dialect

EXACT_COUNT_BELOW = 100_000
"""Count rows exactly when the catalog estimates fewer (or knows nothing)."""
MAX_TABLES = 500


class InternalRunner(Protocol):
    def run_internal(self, sql: str, max_rows: int = ...) -> ExecResult: ...


class Key(BaseModel):
    """A primary, unique or foreign key of one table."""

    name: str
    kind: str
    columns: list[str] = Field(default_factory=list)
    ref_schema: str | None = None
    ref_table: str | None = None
    ref_columns: list[str] = Field(default_factory=list)


def reflect_tables(runner: InternalRunner, dialect: Dialect, sample_rows: int) -> list[TableInfo]:
    """Every user table and view of the database, tables first."""
    queries = dialect.reflection
    if queries is None:
        return []
    listed = runner.run_internal(queries.tables, MAX_TABLES)
    if not listed.ok:
        return []
    columns = _group_columns(runner.run_internal(queries.columns, 50_000))
    keys = _group_keys(runner.run_internal(queries.keys, 50_000))
    tables: list[TableInfo] = []
    for schema, name, kind, estimate in listed.rows:
        ident = (str(schema), str(name))
        display = _display_name(dialect, *ident)
        cols = columns.get(ident, [])
        table_keys = keys.get(ident, [])
        primary = {c for k in table_keys if k.kind == "PRIMARY KEY" for c in k.columns}
        infos = [
            ColumnInfo(name=c, type=t, nullable=n, primary_key=c in primary) for c, t, n in cols
        ]
        ddl = create_statement(dialect, display, str(kind), infos, table_keys, schema=ident[0])
        qualified = _table(dialect, *ident)
        sample = runner.run_internal(
            dialect.generate(exp.select("*").from_(qualified).limit(max(sample_rows, 0))),
            max(sample_rows, 0),
        )
        count = _row_count(runner, dialect, qualified, str(kind), estimate)
        tables.append(
            TableInfo(
                name=display,
                ddl=ddl,
                columns=infos,
                sample_rows=sample.rows if sample.ok else [],
                row_count=count,
            )
        )
    return tables


def create_statement(
    dialect: Dialect,
    name: str,
    kind: str,
    columns: list[ColumnInfo],
    keys: list[Key],
    *,
    schema: str | None = None,
) -> str:
    """A CREATE TABLE (or, for a view, CREATE VIEW with its columns) for prompts."""
    q = dialect.quote_identifier
    lines = []
    for column in columns:
        line = f"  {q(column.name)} {column.type}".rstrip()
        if not column.nullable and kind != "view":
            line += " NOT NULL"
        lines.append(line)
    for key in keys:
        cols = ", ".join(q(c) for c in key.columns)
        if key.kind == "PRIMARY KEY":
            lines.append(f"  PRIMARY KEY ({cols})")
        elif key.kind == "UNIQUE":
            lines.append(f"  UNIQUE ({cols})")
        elif key.kind == "FOREIGN KEY" and key.ref_table:
            target = _display_name(dialect, key.ref_schema or schema or "", key.ref_table)
            refs = ", ".join(q(c) for c in key.ref_columns)
            lines.append(
                f"  FOREIGN KEY ({cols}) REFERENCES {_quote_dotted(dialect, target)} ({refs})"
            )
    head = "CREATE VIEW" if kind == "view" else "CREATE TABLE"
    return f"{head} {_quote_dotted(dialect, name)} (\n" + ",\n".join(lines) + "\n)"


def _group_columns(result: ExecResult) -> dict[tuple[str, str], list[tuple[str, str, bool]]]:
    grouped: dict[tuple[str, str], list[tuple[str, str, bool]]] = defaultdict(list)
    if result.ok:
        for schema, table, column, type_, nullable, _ordinal in result.rows:
            grouped[(str(schema), str(table))].append(
                (str(column), str(type_ or ""), _truthy(nullable))
            )
    return grouped


def _group_keys(result: ExecResult) -> dict[tuple[str, str], list[Key]]:
    found: dict[tuple[str, str, str], Key] = {}
    if result.ok:
        for (
            schema,
            table,
            name,
            kind,
            column,
            _pos,
            ref_schema,
            ref_table,
            ref_column,
        ) in result.rows:
            ident = (str(schema), str(table), str(name))
            key = found.get(ident)
            if key is None:
                key = found[ident] = Key(
                    name=str(name),
                    kind=str(kind).upper(),
                    ref_schema=None if ref_schema is None else str(ref_schema),
                    ref_table=None if ref_table is None else str(ref_table),
                )
            key.columns.append(str(column))
            if ref_column is not None:
                key.ref_columns.append(str(ref_column))
    grouped: dict[tuple[str, str], list[Key]] = defaultdict(list)
    order = {"PRIMARY KEY": 0, "UNIQUE": 1, "FOREIGN KEY": 2}
    for (schema, table, _), key in sorted(found.items(), key=lambda i: order.get(i[1].kind, 3)):
        grouped[(schema, table)].append(key)
    return grouped


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().upper() in ("YES", "Y", "TRUE", "1", "T")
    return bool(value)


def _display_name(dialect: Dialect, schema: str, table: str) -> str:
    """`table` in the default schema (or the connection's database), else `schema.table`."""
    if dialect.default_schema is None or schema in ("", dialect.default_schema):
        return table
    return f"{schema}.{table}"


def _quote_dotted(dialect: Dialect, name: str) -> str:
    return ".".join(dialect.quote_identifier(part) for part in name.split(".", 1))


def _table(dialect: Dialect, schema: str, table: str) -> exp.Table:
    if dialect.default_schema is None:  # MySQL (the connection's database), Oracle (the user)
        return exp.table_(table, quoted=True)
    return exp.table_(table, db=schema, quoted=True)


def _row_count(
    runner: InternalRunner, dialect: Dialect, table: exp.Table, kind: str, estimate: Any
) -> int | None:
    if kind == "view":
        return None
    if isinstance(estimate, int | float) and estimate >= EXACT_COUNT_BELOW:
        return int(estimate)
    counted = runner.run_internal(
        dialect.generate(exp.select(exp.Count(this=exp.Star())).from_(table)), 1
    )
    if counted.ok and counted.rows and isinstance(counted.rows[0][0], int):
        return counted.rows[0][0]
    return int(estimate) if isinstance(estimate, int | float) and estimate >= 0 else None
