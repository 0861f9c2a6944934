"""A value written in identifier quotes (`"Oslo"`, `` `Oslo` ``): written as the string it is.

acts-sql's own rule. PostgreSQL and DuckDB read `city = "Oslo"` as a comparison
with a column named Oslo and SQLite and MySQL read backticks the same way, so the
statement fails with "no such column" (DuckDB: "Referenced column ... not found").
When the error names the identifier, the identifier is quoted and unqualified,
and nothing the statement could mean by it exists (no column of that name in any
table, no output name of the statement or its CTEs), it becomes a string literal
wherever it stands (in a comparison, an IN list, a function's argument, or a
SELECT list without FROM: `SELECT "A" AS type`). Applies only to a statement
that fails.
"""

from __future__ import annotations

import re

from sqlglot import exp

from acts_sql.sql.rules._tree import rewrite
from acts_sql.sql.rules.base import Repair, Rule, RuleInput, RuleOutcome, Stage
from acts_sql.sql.schema_facts import SchemaFacts

_NAMED = re.compile(
    r"no such column:\s*(?P<a>.+?)\s*$|column\s+\"?(?P<b>[^\"]+?)\"?\s+does not exist"
    r"|Unknown column\s+'(?P<c>[^']+)'|Invalid column name\s+'(?P<d>[^']+)'"
    r"|Referenced column\s+\"(?P<e>[^\"]+)\"\s+not found",
    re.IGNORECASE | re.MULTILINE,
)


class QuotedValue(Rule):
    """A string value written in identifier quotes, which the engine reads as a column."""

    name = "quoted_value"
    stage = Stage.SYNTAX
    lexical = True

    def check(self, given: RuleInput) -> RuleOutcome | None:
        named = _named(given.error or "")
        if named is None or given.facts.tables_with(named):
            return None
        fixed = rewrite(given, lambda tree: _as_strings(tree, named, given.facts))
        if fixed is None:
            return None
        return RuleOutcome(repairs=[Repair(sql=fixed, detail=f'"{named}" written as a string')])


def _named(error: str) -> str | None:
    match = _NAMED.search(error)
    if not match:
        return None
    written = next(g for g in match.groups() if g)
    return written.strip().strip("\"'`[]")


def _as_strings(statement: exp.Expr, named: str, facts: SchemaFacts) -> bool:
    changed = False
    outputs = (
        {name.lower() for query in statement.find_all(exp.Select) for name in query.named_selects}
        | {alias.name.lower() for alias in statement.find_all(exp.TableAlias)}
        | {c.name.lower() for a in statement.find_all(exp.TableAlias) for c in a.columns}
    )
    for column in list(statement.find_all(exp.Column)):
        ident = column.this
        if column.table or not isinstance(ident, exp.Identifier) or not ident.quoted:
            continue
        if ident.this != named or named.lower() in outputs:
            continue
        column.replace(exp.Literal.string(ident.this))
        changed = True
    return changed
