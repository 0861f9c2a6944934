"""`information_schema.tables` or `.columns` on SQLite, which has no information_schema.

Models write the standard catalog views wherever they list tables or columns,
and copy them from issues written for PostgreSQL: in the kept runs of one
SQLite development task, 9 candidates failed with "no such table:
information_schema.tables". This rule puts SQLite's own catalog in their
place, as a subquery with the standard views' column names:
`information_schema.tables` becomes the tables and views of `sqlite_master`
(`table_name`, `table_schema` = 'main', `table_type` 'BASE TABLE' or 'VIEW', and
`sqlite_master`'s own `name` and `type`, which models mix in),
`information_schema.columns` each column of `pragma_table_info` of those
(`table_name`, `column_name`, `data_type`, `ordinal_position`, `is_nullable`,
`column_default`, `table_schema`). The reference keeps its alias (or takes the
view's name as one), so the statement's column references still resolve.
SQLite only; applies only to a statement that fails.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from acts_sql.sql.rules._tree import rewrite
from acts_sql.sql.rules.base import Repair, Rule, RuleInput, RuleOutcome, Stage

_VIEWS = {
    "tables": (
        "SELECT name, type, name AS table_name, 'main' AS table_schema, "
        "CASE type WHEN 'view' THEN 'VIEW' ELSE 'BASE TABLE' END AS table_type "
        "FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'"
    ),
    "columns": (
        "SELECT m.name AS table_name, p.name AS column_name, p.type AS data_type, "
        "p.cid + 1 AS ordinal_position, "
        "CASE WHEN p.\"notnull\" = 1 THEN 'NO' ELSE 'YES' END AS is_nullable, "
        "p.dflt_value AS column_default, 'main' AS table_schema "
        "FROM sqlite_master AS m JOIN pragma_table_info(m.name) AS p "
        "WHERE m.type IN ('table', 'view') AND m.name NOT LIKE 'sqlite_%'"
    ),
}
"""SQLite's catalog in the shape of each standard view."""


class CatalogViews(Rule):
    """information_schema.tables / .columns on SQLite: sqlite_master and pragma_table_info."""

    name = "catalog_views"
    stage = Stage.SYNTAX

    def check(self, given: RuleInput) -> RuleOutcome | None:
        if given.error is None or given.d.name != "sqlite":
            return None
        if "information_schema" not in given.sql.lower():
            return None
        fixed = rewrite(given, _replace_views)
        if fixed is None:
            return None
        detail = "information_schema read from sqlite_master and pragma_table_info"
        return RuleOutcome(repairs=[Repair(sql=fixed, detail=detail)])


def _replace_views(statement: exp.Expr) -> bool:
    changed = False
    for table in list(statement.find_all(exp.Table)):
        view = table.name.lower()
        if table.text("db").lower() != "information_schema" or view not in _VIEWS:
            continue
        alias = table.alias or view
        body = sqlglot.parse_one(_VIEWS[view], read="sqlite")
        table.replace(exp.Subquery(this=body, alias=exp.TableAlias(this=exp.to_identifier(alias))))
        changed = True
    return changed
