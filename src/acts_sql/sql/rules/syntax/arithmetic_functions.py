"""Arithmetic written as functions: ADD(a, b), SUBTRACT(a, b), MULTIPLY(a, b), DIVIDE(a, b).

Models write these (spreadsheet and pandas habits); no supported engine has them
except DuckDB, where the statement would not have failed. Each call with two
arguments becomes the operator over the parenthesised arguments:
`SUBTRACT(a, b)` -> `((a) - (b))`; nested calls are rewritten inside out.
Applies only to a statement that fails.
"""

from __future__ import annotations

from functools import cache

import sqlglot
from sqlglot import exp

from acts_sql.sql.dialects import Dialect
from acts_sql.sql.rules._tree import rewrite
from acts_sql.sql.rules.base import Repair, Rule, RuleInput, RuleOutcome, Stage

_OPERATORS: dict[str, type[exp.Binary]] = {
    "add": exp.Add,
    "subtract": exp.Sub,
    "multiply": exp.Mul,
    "divide": exp.Div,
}


class ArithmeticFunctions(Rule):
    """Arithmetic written as functions (ADD, SUBTRACT, MULTIPLY, DIVIDE) that the engine lacks."""

    name = "arithmetic_functions"
    stage = Stage.SYNTAX

    def check(self, given: RuleInput) -> RuleOutcome | None:
        if given.error is None:
            return None
        fixed = rewrite(given, lambda tree: _replace_calls(tree, given.d))
        if fixed is None:
            return None
        return RuleOutcome(
            repairs=[Repair(sql=fixed, detail="function calls written as operators")]
        )


def _replace_calls(statement: exp.Expr, d: Dialect) -> bool:
    changed = False
    for call in reversed(list(statement.find_all(exp.Anonymous))):
        operator = _OPERATORS.get(str(call.this).lower())
        if operator is None or len(call.expressions) != 2:
            continue
        left, right = (_operand(e) for e in call.expressions)
        flags = _division_flags(d.sqlglot_name) if operator is exp.Div else {}
        call.replace(exp.Paren(this=operator(this=left, expression=right, **flags)))
        changed = True
    return changed


@cache
def _division_flags(dialect: str) -> dict[str, object]:
    """How the dialect's own `/` reads, so that sqlglot writes it back as a plain `/`."""
    div = sqlglot.parse_one("SELECT 1 / 2", read=dialect).find(exp.Div)
    return {k: div.args.get(k) for k in ("typed", "safe")} if div is not None else {}


def _operand(node: exp.Expr) -> exp.Expr:
    """`node` as an operand: parenthesised unless it is a name, a literal or a call."""
    atomic = isinstance(node, exp.Column | exp.Literal | exp.Func | exp.Paren)
    return node.copy() if atomic else exp.Paren(this=node.copy())
