"""Integer division where a ratio is meant: the numerator cast to a decimal type.

MapleRepair's "missing CAST" repairer. SQLite, PostgreSQL and SQL Server
truncate `a / b` when both operands are integers, so `COUNT(*) * 100 / total`
or `SUM(wins) / COUNT(*)` quietly lose their fraction. When both operands are
integer-valued (integer literals, COUNT, LENGTH, integer-typed columns by the
schema, integer casts, and +, -, *, %, SUM, MIN, MAX, ABS of those), the
numerator becomes `CAST(... AS REAL)` (SQLite), `NUMERIC` (PostgreSQL, so
ROUND(x, 2) still works) or `FLOAT` (SQL Server). Left alone: a division
whose quotient is truncated on purpose (inside FLOOR, CEIL, TRUNC, a cast to
an integer type, or a GROUP BY), and any operand of unknown type. MySQL,
DuckDB and Oracle divide exactly, so the rule does not apply there.
"""

from __future__ import annotations

from sqlglot import exp

from acts_sql.sql.rules._tree import Resolver, rewrite
from acts_sql.sql.rules.base import Repair, Rule, RuleInput, RuleOutcome, Stage
from acts_sql.sql.schema_facts import SchemaFacts

_DECIMAL = {"sqlite": "REAL", "postgresql": "NUMERIC", "sqlserver": "FLOAT"}
_INTEGER_FUNCS = (exp.Count, exp.Length)
_PASS_THROUGH = (exp.Sum, exp.Min, exp.Max, exp.Abs, exp.Paren)
_INTEGER_OPS = (exp.Add, exp.Sub, exp.Mul, exp.Mod)
_TRUNCATING = (exp.Floor, exp.Ceil, exp.Group)


class IntegerDivision(Rule):
    """Integer division that truncates a ratio: the numerator cast to a decimal type."""

    name = "integer_division"
    stage = Stage.LOGIC

    def check(self, given: RuleInput) -> RuleOutcome | None:
        target = _DECIMAL.get(given.d.name)
        if target is None:
            return None
        fixed = rewrite(given, lambda tree: _cast_divisions(tree, given.facts, target))
        if fixed is None:
            return None
        return RuleOutcome(repairs=[Repair(sql=fixed, detail=f"numerator cast to {target}")])


def _cast_divisions(statement: exp.Expr, facts: SchemaFacts, target: str) -> bool:
    resolver = Resolver(statement, facts)
    changed = False
    for div in list(statement.find_all(exp.Div)):
        if _truncated_on_purpose(div):
            continue
        if _integer(div.this, resolver) and _integer(div.expression, resolver):
            numerator = div.this
            div.set("this", exp.Cast(this=numerator.copy(), to=exp.DataType.build(target)))
            changed = True
    return changed


def _truncated_on_purpose(div: exp.Div) -> bool:
    select = div.find_ancestor(exp.Select)
    group = select.args.get("group") if select is not None else None
    if isinstance(group, exp.Group) and any(div.sql() in g.sql() for g in group.expressions):
        return True  # bucketing: the grouped expression is the truncated quotient
    node = div.parent
    while node is not None and not isinstance(node, exp.Select):
        if isinstance(node, _TRUNCATING) or _integer_cast(node):
            return True
        if isinstance(node, exp.Anonymous) and str(node.this).lower() in ("trunc", "truncate"):
            return True
        node = node.parent
    return False


def _integer_cast(node: exp.Expr) -> bool:
    if not isinstance(node, exp.Cast):
        return False
    return node.to.is_type(*exp.DataType.INTEGER_TYPES)


def _integer(node: exp.Expr | None, resolver: Resolver) -> bool:
    """Whether `node` is integer-valued by what the query and the schema say."""
    if isinstance(node, exp.Literal):
        return not node.is_string and node.this.lstrip("-").isdigit()
    if isinstance(node, _INTEGER_FUNCS) or _integer_cast(node if node is not None else exp.Null()):
        return True
    if isinstance(node, exp.Column):
        fact = resolver.table_of(node)
        column = fact.column(node.name) if fact else None
        return column is not None and column.is_integer
    if isinstance(node, exp.Subquery) and isinstance(node.this, exp.Select):
        projections = node.this.expressions
        return len(projections) == 1 and _integer(_unaliased(projections[0]), resolver)
    if isinstance(node, _PASS_THROUGH):
        return _integer(node.this, resolver)
    if isinstance(node, _INTEGER_OPS):
        return _integer(node.this, resolver) and _integer(node.expression, resolver)
    return False


def _unaliased(node: exp.Expr) -> exp.Expr:
    return node.this if isinstance(node, exp.Alias) else node
