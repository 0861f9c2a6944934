"""What a question refers to and what a SQL statement uses: DAC's entity comparison.

DAC links the question's words to the schema's tables, columns and values
(an LLM does, `acts_sql.agent.dac`), then tells the corrector which linked
entities the SQL does not use. The pure parts are here:

- `grounded`: the linker's mentions checked against the schema (names
  written as the schema writes them; a table or column the schema lacks is
  dropped, a column without its table gets the one table that has it);
- `question_columns`: DAC's deterministic pass, columns of the linked tables
  whose words occur in the question in order (`order date` for `order_date`);
- `sql_entities`: the tables, columns (resolved to their tables through
  sqlglot's scopes) and literals a statement uses;
- `disagreements`: mentioned tables and columns the statement does not use,
  and mentioned values (checked against the database by the caller) that
  none of its literals spells.
Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field
from sqlglot import exp

from acts_sql.sql._rewrite import BAD_SQL_ERRORS
from acts_sql.sql.diagnostics import parse_statements
from acts_sql.sql.dialects import Dialect, get_dialect
from acts_sql.sql.rules._tree import Resolver
from acts_sql.sql.schema_facts import SchemaFacts

_WORD = re.compile(r"[A-Za-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


class Mention(BaseModel):
    """One thing the question refers to."""

    phrase: str = ""
    kind: Literal["table", "column", "value"]
    table: str | None = None
    column: str | None = None
    value: str | None = None

    @property
    def where(self) -> str:
        return f"{self.table}.{self.column}" if self.table and self.column else self.table or ""


class SqlEntities(BaseModel):
    tables: set[str] = Field(default_factory=set)
    """Lower-case names of the schema tables the statement reads."""
    columns: set[str] = Field(default_factory=set)
    """Lower-case `table.column` of the columns resolved to a schema table."""
    bare_columns: set[str] = Field(default_factory=set)
    """Lower-case names of every column the statement writes, resolved or not."""
    literals: set[str] = Field(default_factory=set)
    """The text of its string and number literals, as written (a value's case matters)."""


class Disagreement(BaseModel):
    tables: list[str] = Field(default_factory=list)
    columns: list[str] = Field(default_factory=list)
    values: list[Mention] = Field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.tables or self.columns or self.values)


def grounded(mentions: list[Mention], facts: SchemaFacts) -> list[Mention]:
    """`mentions` with schema spelling; those naming nothing in the schema are dropped."""
    kept: dict[tuple[str, str, str, str], Mention] = {}
    for mention in mentions:
        fixed = _ground(mention, facts)
        if fixed is not None:
            key = (fixed.kind, fixed.table or "", fixed.column or "", fixed.value or "")
            kept.setdefault(key, fixed)
    return list(kept.values())


def _ground(mention: Mention, facts: SchemaFacts) -> Mention | None:
    table = facts.table(mention.table) if mention.table else None
    if mention.kind == "table":
        return mention.model_copy(update={"table": table.name}) if table else None
    column_name = mention.column or ""
    if table is None and column_name:
        owners = facts.tables_with(column_name)
        table = owners[0] if len(owners) == 1 else None
    column = table.column(column_name) if table and column_name else None
    if table is None or column is None:
        return None
    if mention.kind == "value" and not (mention.value or "").strip():
        return None
    return mention.model_copy(update={"table": table.name, "column": column.name})


def _words(name: str) -> list[str]:
    return [_singular(w.lower()) for w in _WORD.findall(_CAMEL.sub(" ", name))]


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def question_columns(question: str, facts: SchemaFacts, tables: list[str]) -> list[Mention]:
    """Columns of `tables` whose name's words occur in the question, in order, together."""
    asked = " " + " ".join(_words(question)) + " "
    found = []
    for name in tables:
        table = facts.table(name)
        if table is None:
            continue
        for column in table.columns:
            words = _words(column.name)
            if words and f" {' '.join(words)} " in asked:
                found.append(
                    Mention(
                        phrase=" ".join(words), kind="column", table=table.name, column=column.name
                    )
                )
    return found


def sql_entities(sql: str, dialect: str | Dialect, facts: SchemaFacts) -> SqlEntities | None:
    """What `sql` uses; None when it does not parse."""
    d = get_dialect(dialect)
    try:
        statements = parse_statements(sql, d)
    except BAD_SQL_ERRORS:
        return None
    found = SqlEntities()
    for statement in statements:
        resolver = Resolver(statement, facts)
        for table in statement.find_all(exp.Table):
            fact = facts.table(table.name)
            if fact is not None:
                found.tables.add(fact.name.lower())
        for column in statement.find_all(exp.Column):
            found.bare_columns.add(column.name.lower())
            owner = resolver.table_of(column)
            if owner is not None:
                found.columns.add(f"{owner.name}.{column.name}".lower())
        for literal in statement.find_all(exp.Literal):
            found.literals.add(str(literal.this).strip())
    return found


def condition_columns(
    sql: str, dialect: str | Dialect, facts: SchemaFacts, limit: int
) -> list[tuple[str, str]]:
    """(table, column) of the schema columns `sql` reads, those in its conditions (WHERE, JOIN
    ... ON, HAVING) first, then the rest, in the order written, at most `limit`; empty when
    it does not parse. What a column-inspecting step looks at when it is not told."""
    try:
        statements = parse_statements(sql, get_dialect(dialect))
    except BAD_SQL_ERRORS:
        return []
    first: list[tuple[str, str]] = []
    rest: list[tuple[str, str]] = []
    for statement in statements:
        resolver = Resolver(statement, facts)
        for column in statement.find_all(exp.Column):
            owner = resolver.table_of(column)
            fact = owner.column(column.name) if owner is not None else None
            if owner is None or fact is None:
                continue
            pair = (owner.name, fact.name)
            in_condition = column.find_ancestor(exp.Where, exp.Join, exp.Having) is not None
            (first if in_condition else rest).append(pair)
    return list(dict.fromkeys(first + rest))[:limit]


def disagreements(mentions: list[Mention], entities: SqlEntities) -> Disagreement:
    """Mentioned tables, columns and values the statement does not use."""
    result = Disagreement()
    for m in mentions:
        if m.kind == "table" and m.table and m.table.lower() not in entities.tables:
            result.tables.append(m.table)
        elif m.kind == "column" and m.column and not _uses_column(m, entities):
            result.columns.append(m.where)
        elif m.kind == "value" and (m.value or "").strip() not in entities.literals:
            result.values.append(m)
    result.tables = list(dict.fromkeys(result.tables))
    result.columns = list(dict.fromkeys(result.columns))
    return result


def _uses_column(mention: Mention, entities: SqlEntities) -> bool:
    if mention.where.lower() in entities.columns:
        return True
    resolved_elsewhere = any(
        c.endswith("." + (mention.column or "").lower()) for c in entities.columns
    )
    return not resolved_elsewhere and (mention.column or "").lower() in entities.bare_columns
