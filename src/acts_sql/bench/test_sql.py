"""The SQL a test case will run, as far as its source shows it.

Test cases are Python sources from the benchmark. They run SQL of their own
besides the prediction and the solution (``execute_queries(["SELECT ..."])``,
``perform_query_on_postgresql_databases(sql, db_name)``, ``cur.execute(q)``),
and that SQL needs its tables as much as the solution does. This module reads
the source without running it (``ast``) and returns the string arguments of
those calls: literals, lists of literals, f-strings (each ``{...}`` read as
``0``) and names bound to such values by an assignment or a ``for`` loop
anywhere in the source. SQL built any other way (a parameter, a function's
result, string concatenation) is not visible and is left out.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from acts_sql.bench import python_ast

EXECUTING_FUNCTIONS = {
    "execute_queries": (0,),
    "perform_query_on_postgresql_databases": (0,),
    "perform_query_on_mysql_databases": (0,),
    "perform_query_on_sqlite_databases": (0,),
    "ex_base": (0, 1),
    "performance_compare_by_qep": (0, 1),
}
"""The official helpers that run SQL, with the positions of their SQL arguments."""
EXECUTING_METHODS = {"execute", "executemany", "executescript"}
"""DB-API cursor and connection methods whose first argument is SQL."""
SQL_KEYWORDS = {"query", "queries", "sql", "sql_list", "pred_sqls", "sol_sqls", "old_sqls"}
PASS_THROUGH = {"remove_distinct", "remove_round", "remove_comments", "list", "tuple"}
"""Calls that hand their first argument's SQL on (the tables stay the same)."""
PLACEHOLDER = "0"
_PASSES = 3
"""Rounds of name resolution, so that ``b = a`` after ``a = "..."`` is seen too."""

Bindings = dict[str, list[str]]


def visible_sql(source: str) -> list[str]:
    """The SQL statements a test case visibly runs, in source order, without repeats."""
    try:
        tree = python_ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    bindings = _bindings(tree)
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    calls.sort(key=lambda call: (call.lineno, call.col_offset))
    found: list[str] = []
    for call in calls:
        for argument in _sql_arguments(call):
            found.extend(s for s in strings_of(argument, bindings) if s not in found)
    return found


def _call_name(call: ast.Call) -> tuple[str, bool]:
    """(name, is a method call) of what is called."""
    if isinstance(call.func, ast.Name):
        return call.func.id, False
    if isinstance(call.func, ast.Attribute):
        return call.func.attr, True
    return "", False


def _sql_arguments(call: ast.Call) -> Iterator[ast.expr]:
    name, method = _call_name(call)
    if method and name in EXECUTING_METHODS:
        positions: tuple[int, ...] = (0,)
    elif not method and name in EXECUTING_FUNCTIONS:
        positions = EXECUTING_FUNCTIONS[name]
    else:
        return
    for position in positions:
        if position < len(call.args):
            yield call.args[position]
    for keyword in call.keywords:
        if keyword.arg in SQL_KEYWORDS:
            yield keyword.value


def strings_of(node: ast.expr, bindings: Bindings) -> list[str]:
    """The strings an expression visibly stands for (empty when it cannot be seen)."""
    if isinstance(node, ast.Constant):
        return [node.value] if isinstance(node.value, str) else []
    if isinstance(node, ast.JoinedStr):
        return [_render(node)]
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return [s for element in node.elts for s in strings_of(element, bindings)]
    if isinstance(node, ast.Name):
        return list(bindings.get(node.id, []))
    if isinstance(node, ast.Subscript | ast.Starred):
        return strings_of(node.value, bindings)
    if isinstance(node, ast.Call) and node.args:
        name, method = _call_name(node)
        if not method and name in PASS_THROUGH:
            return strings_of(node.args[0], bindings)
    return []


def _render(node: ast.JoinedStr) -> str:
    parts = []
    for value in node.values:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            parts.append(value.value)
        else:
            parts.append(PLACEHOLDER)
    return "".join(parts)


def _bindings(tree: ast.AST) -> Bindings:
    """Names bound to visible strings: ``x = "..."``, ``x = [...]``, ``for x in [...]``."""
    bindings: Bindings = {}
    for _ in range(_PASSES):
        for node in ast.walk(tree):
            for name, value in _bound(node):
                values = strings_of(value, bindings)
                known = bindings.setdefault(name, [])
                known.extend(v for v in values if v not in known)
    return bindings


def _bound(node: ast.AST) -> Iterator[tuple[str, ast.expr]]:
    if isinstance(node, ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Name):
                yield target.id, node.value
    elif isinstance(node, ast.AnnAssign):
        if isinstance(node.target, ast.Name) and node.value is not None:
            yield node.target.id, node.value
    elif isinstance(node, ast.For | ast.comprehension) and isinstance(node.target, ast.Name):
        yield node.target.id, node.iter
