"""What the deterministic repairs know about a schema: tables, typed columns, foreign keys.

A plain value (pydantic), built by the caller from whatever it reflected
(`from_tables`: names, types and the tables' DDL, whose FOREIGN KEY and
REFERENCES clauses sqlglot reads) or from CREATE TABLE text alone
(`from_ddl`, which the rule fixtures use). Lookups are case-insensitive and
tolerate a schema prefix (`public.users` answers to `users`). Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import partial

from pydantic import BaseModel, Field
from sqlglot import exp

from acts_sql.sql._rewrite import guarded
from acts_sql.sql.diagnostics import parse_statements
from acts_sql.sql.dialects import Dialect, get_dialect

_INTEGER_TYPES = re.compile(r"^\s*(?:tiny|small|medium|big)?(?:int|integer|serial)\w*\b", re.I)
_TEXT_TYPES = re.compile(r"char|text|clob|string|varchar|nvarchar", re.I)
_NUMERIC_TYPES = re.compile(r"int|real|float|double|numeric|decimal|number|money", re.I)


class ColumnFact(BaseModel):
    name: str
    type: str = ""
    """The declared type as the database reports it ("" when it has none, as SQLite allows)."""
    nullable: bool = True

    @property
    def is_integer(self) -> bool:
        return bool(_INTEGER_TYPES.match(self.type))

    @property
    def is_text(self) -> bool:
        return bool(_TEXT_TYPES.search(self.type))

    @property
    def is_numeric(self) -> bool:
        return bool(_NUMERIC_TYPES.search(self.type))


class TableFact(BaseModel):
    name: str
    columns: list[ColumnFact] = Field(default_factory=list)

    def column(self, name: str) -> ColumnFact | None:
        low = name.lower()
        return next((c for c in self.columns if c.name.lower() == low), None)


class ForeignKey(BaseModel):
    """`table(columns)` references `ref_table(ref_columns)`."""

    table: str
    columns: list[str]
    ref_table: str
    ref_columns: list[str]


class SchemaFacts(BaseModel):
    tables: list[TableFact] = Field(default_factory=list)
    foreign_keys: list[ForeignKey] = Field(default_factory=list)

    def names(self) -> dict[str, list[str]]:
        """Table name -> column names (the shape `repair_identifiers` takes)."""
        return {t.name: [c.name for c in t.columns] for t in self.tables}

    def table(self, name: str) -> TableFact | None:
        """The table `name` (or its last dotted part) names, if any."""
        low = name.lower()
        bare = low.rsplit(".", 1)[-1]
        exact = [t for t in self.tables if t.name.lower() == low]
        if exact:
            return exact[0]
        return next((t for t in self.tables if _bare(t.name) == bare), None)

    def column(self, table: str, column: str) -> ColumnFact | None:
        found = self.table(table)
        return found.column(column) if found else None

    def tables_with(self, column: str) -> list[TableFact]:
        """Every table that has a column of that name."""
        return [t for t in self.tables if t.column(column) is not None]

    def links(self, a: str, b: str) -> list[tuple[str, str]]:
        """(column of `a`, column of `b`) for every single-column foreign key between them."""
        pairs: list[tuple[str, str]] = []
        for fk in self.foreign_keys:
            if len(fk.columns) != 1 or len(fk.ref_columns) != 1:
                continue
            here, there = _bare(fk.table), _bare(fk.ref_table)
            if (here, there) == (_bare(a), _bare(b)):
                pairs.append((fk.columns[0], fk.ref_columns[0]))
            elif (here, there) == (_bare(b), _bare(a)):
                pairs.append((fk.ref_columns[0], fk.columns[0]))
        return list(dict.fromkeys(pairs))

    def linked(self, a: str, column_a: str, b: str, column_b: str) -> bool:
        """Whether a foreign key joins `a.column_a` and `b.column_b` (either way round)."""
        wanted = (column_a.lower(), column_b.lower())
        return any((x.lower(), y.lower()) == wanted for x, y in self.links(a, b))


def _bare(name: str) -> str:
    return name.lower().rsplit(".", 1)[-1]


def from_tables(
    tables: Iterable[tuple[str, list[ColumnFact], str]], dialect: str | Dialect
) -> SchemaFacts:
    """Facts from reflected tables: (name, columns, DDL) each; keys are read from the DDL."""
    d = get_dialect(dialect)
    facts: list[TableFact] = []
    keys: list[ForeignKey] = []
    for name, columns, ddl in tables:
        facts.append(TableFact(name=name, columns=list(columns)))
        keys += guarded([], partial(_keys_of, ddl, d, name))
    return SchemaFacts(tables=facts, foreign_keys=keys)


def from_ddl(ddl: str, dialect: str | Dialect) -> SchemaFacts:
    """Facts from CREATE TABLE statements alone (tests, fixtures)."""
    d = get_dialect(dialect)
    tables: list[TableFact] = []
    keys: list[ForeignKey] = []
    for statement in parse_statements(ddl, d):
        if not isinstance(statement, exp.Create) or not isinstance(statement.this, exp.Schema):
            continue
        schema = statement.this
        name = schema.this.name if isinstance(schema.this, exp.Table) else ""
        columns = [_column_fact(c, d) for c in schema.expressions if isinstance(c, exp.ColumnDef)]
        tables.append(TableFact(name=name, columns=columns))
        keys += _keys_in(statement, name)
    return SchemaFacts(tables=tables, foreign_keys=keys)


def _column_fact(column: exp.ColumnDef, d: Dialect) -> ColumnFact:
    kind = column.args.get("kind")
    not_null = any(
        isinstance(c.args.get("kind"), exp.NotNullColumnConstraint)
        and not c.args["kind"].args.get("allow_null")
        for c in column.constraints
    )
    return ColumnFact(
        name=column.name, type=d.generate(kind) if kind is not None else "", nullable=not not_null
    )


def _keys_of(ddl: str, d: Dialect, name: str) -> list[ForeignKey]:
    if "references" not in ddl.lower():
        return []
    return [
        key
        for statement in parse_statements(ddl, d)
        if isinstance(statement, exp.Create)
        for key in _keys_in(statement, name)
    ]


def _keys_in(statement: exp.Create, name: str) -> list[ForeignKey]:
    """The FOREIGN KEY clauses and column REFERENCES of one CREATE TABLE."""
    keys: list[ForeignKey] = []
    schema = statement.this
    if not isinstance(schema, exp.Schema):
        return keys
    for item in schema.expressions:
        if isinstance(item, exp.ForeignKey):
            ref = _reference(item.args.get("reference"))
            columns = [e.name for e in item.expressions]
            if ref is not None:
                keys.append(ForeignKey(table=name, columns=columns, **ref))
        elif isinstance(item, exp.ColumnDef):
            for constraint in item.constraints:
                ref = _reference(constraint.args.get("kind"))
                if ref is not None:
                    keys.append(ForeignKey(table=name, columns=[item.name], **ref))
    return keys


def _reference(node: object) -> dict[str, object] | None:
    """`ref_table` and `ref_columns` of a REFERENCES clause (None when not one)."""
    if not isinstance(node, exp.Reference):
        return None
    target = node.this
    if isinstance(target, exp.Schema) and isinstance(target.this, exp.Table):
        return {"ref_table": target.this.name, "ref_columns": [e.name for e in target.expressions]}
    if isinstance(target, exp.Table):
        return {"ref_table": target.name, "ref_columns": []}
    return None
