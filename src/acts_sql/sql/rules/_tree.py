"""Reading and writing statements for the rules, and which table a column belongs to."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from sqlglot import exp
from sqlglot.optimizer.scope import Scope, traverse_scope

from acts_sql.sql._rewrite import BAD_SQL_ERRORS, render
from acts_sql.sql.diagnostics import parse_statements
from acts_sql.sql.rules.base import Repair, RuleInput, RuleOutcome
from acts_sql.sql.schema_facts import SchemaFacts, TableFact


def trees(given: RuleInput) -> list[exp.Expr] | None:
    """The statements of `given`, parsed strictly (None when they do not parse)."""
    try:
        return parse_statements(given.sql, given.d) or None
    except BAD_SQL_ERRORS:
        return None


def written(statements: list[exp.Expr], given: RuleInput) -> str:
    """The statements written back in the dialect."""
    return render(statements, given.d, given.sql, given.d)


def rewrite(given: RuleInput, edit: Callable[[exp.Expr], bool]) -> str | None:
    """`given`'s statements after `edit` (which changes a tree in place and says whether it
    did); None when nothing changed or the text does not parse."""
    statements = trees(given)
    if statements is None:
        return None
    changed = False
    for statement in statements:
        changed = edit(statement) or changed
    return written(statements, given) if changed else None


def outcome(
    statements: list[exp.Expr], given: RuleInput, fixed: list[str], hints: list[str]
) -> RuleOutcome | None:
    """The statements as one repair when `fixed` says what changed, plus the hints; None
    when there is neither."""
    repairs = [Repair(sql=written(statements, given), detail="; ".join(fixed))] if fixed else []
    if not repairs and not hints:
        return None
    return RuleOutcome(repairs=repairs, hint="\n".join(dict.fromkeys(hints)) or None)


class Resolver:
    """Which schema table each column of one statement reads, through its scopes; in an
    UPDATE or DELETE, a column outside any SELECT belongs to the target table or to a table
    of its FROM (UPDATE) or USING (DELETE)."""

    def __init__(self, statement: exp.Expr, facts: SchemaFacts) -> None:
        self.facts = facts
        self._dml_tables = _dml_tables(statement)
        self.scopes: list[Scope] = list(traverse_scope(statement))
        self._scope_of: dict[int, Scope] = {}
        self._by_query: dict[int, Scope] = {id(s.expression): s for s in self.scopes}
        for scope in self.scopes:
            for column in scope.columns:
                self._scope_of.setdefault(id(column), scope)

    def scope_of(self, column: exp.Column) -> Scope | None:
        """The scope `column` is read in; for a column sqlglot does not list there (an ORDER
        BY key that is also an output name), the scope of its SELECT."""
        found = self._scope_of.get(id(column))
        if found is not None:
            return found
        select = column.find_ancestor(exp.Select)
        return self._by_query.get(id(select)) if select is not None else None

    def source(self, column: exp.Column) -> tuple[exp.Table, TableFact] | None:
        """The FROM table `column` reads and its facts, when the schema has both."""
        scope = self.scope_of(column)
        if scope is None:
            return self._dml_source(column)
        qualifier = column.table
        if qualifier:
            return self._table(scope, qualifier)
        owners = [
            found
            for name in scope.selected_sources
            if (found := self._table(scope, name)) is not None
            and found[1].column(column.name) is not None
        ]
        return owners[0] if len(owners) == 1 else None

    def table_of(self, column: exp.Column) -> TableFact | None:
        found = self.source(column)
        return found[1] if found else None

    def _dml_source(self, column: exp.Column) -> tuple[exp.Table, TableFact] | None:
        if not self._dml_tables or column.find_ancestor(exp.Select) is not None:
            return None
        known = [(t, f) for t in self._dml_tables if (f := self.facts.table(t.name)) is not None]
        qualifier = column.table.lower()
        if qualifier:
            owners = [(t, f) for t, f in known if t.alias_or_name.lower() == qualifier]
        else:
            owners = [(t, f) for t, f in known if f.column(column.name) is not None]
        return owners[0] if len(owners) == 1 else None

    def _table(self, scope: Scope, name: str) -> tuple[exp.Table, TableFact] | None:
        entry = _selected(scope, name)
        if entry is None or not isinstance(entry, exp.Table):
            return None
        fact = self.facts.table(entry.name)
        return (entry, fact) if fact is not None else None


def _dml_tables(statement: exp.Expr) -> list[exp.Table]:
    """An UPDATE's or DELETE's target table, then the tables of its FROM or USING."""
    if not isinstance(statement, exp.Update | exp.Delete) or not isinstance(
        statement.this, exp.Table
    ):
        return []
    extra: list[exp.Table] = []
    for key in ("from_", "from", "using"):
        part = statement.args.get(key)
        for node in part if isinstance(part, list) else [part]:
            if isinstance(node, exp.Expr):  # find_all yields the node itself first
                extra.extend(node.find_all(exp.Table))
    return [statement.this, *extra]


def _selected(scope: Scope, name: str) -> object | None:
    low = name.lower()
    for key, (_, source) in scope.selected_sources.items():
        if key.lower() == low:
            return source
    return None


def is_string(node: exp.Expr | None) -> bool:
    return isinstance(node, exp.Literal) and node.is_string


def walk(statement: exp.Expr, *kinds: type[exp.Expr]) -> Iterator[exp.Expr]:
    """Nodes of `kinds` in `statement`, as a list first (so the tree may be edited)."""
    return iter(list(statement.find_all(*kinds)))
