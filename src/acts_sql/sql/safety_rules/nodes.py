"""Rules over every node of a statement's tree.

Each rule looks at one node and returns the findings it makes there (usually
none). `judge_nodes` walks the tree once and applies every rule in
`NODE_RULES` to every node below the root.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from sqlglot import exp

from acts_sql.sql.safety_rules.escapes import ESCAPING_DIALECTS, NAMEDATALEN
from acts_sql.sql.safety_rules.findings import Context, Finding
from acts_sql.sql.safety_rules.functions import (
    ALLOWLIST_DIALECTS,
    HARMLESS_CLASSES,
    OPERATOR_CLASSES,
    blocked_kind,
    is_listed,
)
from acts_sql.sql.safety_rules.statements import statement_kind
from acts_sql.sql.safety_rules.tables import (
    FILE_TABLE,
    FUNCTION_RULES,
    GUARDED_PACKAGES,
    HARMLESS_PACKAGES,
    LOCK_HINTS,
    ORACLE_SEQUENCE_COLUMNS,
    PACKAGE_CATEGORIES,
    READ_ROOTS,
    SESSION_HINTS,
    STATEMENT_KINDS,
    STATEMENT_PARTS,
)

NodeRule = Callable[[exp.Expr, Context], Iterator[Finding]]

_STATEMENT_MODULES = ("sqlglot.expressions.ddl", "sqlglot.expressions.dml")
"""Where sqlglot defines its statement classes."""


def judge_nodes(statement: exp.Expr, ctx: Context) -> list[Finding]:
    """Findings of every rule at every node below `statement`."""
    found: list[Finding] = []
    for node in statement.walk():
        if node is statement:
            continue
        for rule in NODE_RULES:
            found.extend(finding.located(_where(node, statement)) for finding in rule(node, ctx))
    return found


def nested_statement(node: exp.Expr, _ctx: Context) -> Iterator[Finding]:
    """A statement inside another: DELETE in a CTE, SELECT ... INTO, FOR
    UPDATE, a Command, or any class sqlglot files under statements that the
    tables do not list (unknown, so blocked)."""
    name = type(node).__name__
    if name in STATEMENT_KINDS:
        yield Finding.of(statement_kind(node))
    elif (
        type(node).__module__ in _STATEMENT_MODULES
        and name not in STATEMENT_PARTS
        and name not in READ_ROOTS
    ):
        yield Finding("unknown", name.upper())


def side_effect_function(node: exp.Expr, ctx: Context) -> Iterator[Finding]:
    """A call of a function listed in `FUNCTION_RULES` for this dialect."""
    if not isinstance(node, exp.Func):
        return
    for name in _function_names(node):
        for rule in FUNCTION_RULES:
            if rule.applies(name, ctx.dialect.name):
                yield Finding.of(rule.kind, name=name)
                return


def unlisted_function(node: exp.Expr, ctx: Context) -> Iterator[Finding]:
    """A call of an always-blocked function (every dialect), or, on PostgreSQL and
    DuckDB, of a function not on the allowlist (see `functions`)."""
    if not isinstance(node, exp.Func):
        return
    dialect = ctx.dialect.name
    names = call_names(node, dialect)
    for name in names:
        kind = blocked_kind(name, dialect)
        if kind is not None:
            yield Finding.of(kind)
            return
    if dialect not in ALLOWLIST_DIALECTS or _known_syntax(node) or _in_pragma(node):
        return
    if any(is_listed(name, dialect, ctx.catalog_functions) for name in names):
        return
    rendered = _rendered_name(node, ctx)
    if rendered is None or not is_listed(rendered, dialect, ctx.catalog_functions):
        yield Finding("function", f"{names[0]}()")


def call_names(node: exp.Func, dialect: str) -> list[str]:
    """The names a call may be known by, normalised as the engine looks functions up.

    A name sqlglot does not know (`Anonymous`) is the call's own: folded to lower case
    unless quoted on PostgreSQL (where `"PG_READ_FILE"` is another, unknown name) and
    cut to the 63 bytes PostgreSQL keeps; a schema prefix (`pg_catalog.f`) is a `Dot`
    around the call and never part of it. A class sqlglot maps calls to: its SQL names.
    """
    if not isinstance(node, exp.Anonymous | exp.AnonymousAggFunc):
        return _function_names(node)
    this = node.this
    quoted = isinstance(this, exp.Identifier) and this.quoted
    name = this.name if isinstance(this, exp.Expr) else str(this)
    if dialect in ESCAPING_DIALECTS:
        name = name.encode("utf-8")[: NAMEDATALEN - 1].decode("utf-8", "ignore")
    return [name if quoted and dialect == "postgresql" else name.lower()]


def _in_pragma(node: exp.Func) -> bool:
    """A PRAGMA's body (`PRAGMA table_info('t')`): the pragma rules judge it."""
    return isinstance(node.parent, exp.Pragma | exp.EQ) and isinstance(
        node.parent if isinstance(node.parent, exp.Pragma) else node.parent.parent, exp.Pragma
    )


_CALL_NAME = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def _rendered_name(node: exp.Func, ctx: Context) -> str | None:
    """The function name sqlglot writes for a class it maps calls to, in this dialect
    (`Transform` is DuckDB's `list_transform`), lower case; None when it writes none."""
    if isinstance(node, exp.Anonymous | exp.AnonymousAggFunc):
        return None
    try:
        match = _CALL_NAME.match(node.sql(dialect=ctx.dialect.sqlglot_name))
    except Exception:
        return None
    return match.group(1).lower() if match else None


def _known_syntax(node: exp.Func) -> bool:
    """A sqlglot class reviewed as harmless syntax (`HARMLESS_CLASSES`), or an operator."""
    if isinstance(node, exp.Anonymous | exp.AnonymousAggFunc):
        return False
    bases = {base.__name__ for base in type(node).__mro__}
    return type(node).__name__ in HARMLESS_CLASSES or not bases.isdisjoint(OPERATOR_CLASSES)


def package_call(node: exp.Expr, _ctx: Context) -> Iterator[Finding]:
    """`pkg.fn(...)` or `owner.pkg.fn(...)` where pkg is a guarded Oracle
    package (DBMS_*, UTL_*) not known to be harmless."""
    if not (isinstance(node, exp.Dot) and isinstance(node.expression, exp.Func)):
        return
    for part in _qualifier_parts(node.this):
        lowered = part.lower()
        if GUARDED_PACKAGES.fullmatch(lowered) and lowered not in HARMLESS_PACKAGES:
            category = PACKAGE_CATEGORIES.get(lowered, "procedure")
            yield Finding(category, f"{part}.{node.expression.name}()")
            return


def oracle_sequence(node: exp.Expr, ctx: Context) -> Iterator[Finding]:
    """Oracle `seq.NEXTVAL`, which sqlglot reads as a column."""
    if (
        ctx.dialect.name == "oracle"
        and isinstance(node, exp.Column)
        and node.table
        and node.name.lower() in ORACLE_SEQUENCE_COLUMNS
    ):
        yield Finding("sequence", f"{node.table}.{node.name}")


def lock_hint(node: exp.Expr, _ctx: Context) -> Iterator[Finding]:
    """SQL Server table hints that take locks: `WITH (UPDLOCK)`."""
    if isinstance(node, exp.WithTableHint):
        for hint in node.expressions:
            if hint.name.upper() in LOCK_HINTS:
                yield Finding("lock", f"WITH ({hint.name.upper()})")


def file_table(node: exp.Expr, ctx: Context) -> Iterator[Finding]:
    """DuckDB reads a file named as a table: `FROM 'data/x.csv'`."""
    if ctx.dialect.name != "duckdb" or not isinstance(node, exp.Table):
        return
    ident = node.this
    if isinstance(ident, exp.Identifier) and ident.quoted and FILE_TABLE.fullmatch(ident.name):
        yield Finding("file", f"reading the file {ident.name!r}")


def variable_assignment(node: exp.Expr, _ctx: Context) -> Iterator[Finding]:
    """MySQL `@v := expr` inside a query sets a session variable."""
    if isinstance(node, exp.PropertyEQ) and isinstance(
        node.this, exp.Parameter | exp.SessionParameter
    ):
        yield Finding("session", f"assigning {node.this.sql()}")


def optimizer_hint(node: exp.Expr, _ctx: Context) -> Iterator[Finding]:
    """MySQL hints that override the executor's limits: MAX_EXECUTION_TIME, SET_VAR."""
    if isinstance(node, exp.Hint):
        for hint in node.expressions:
            name = hint.name.lower() if isinstance(hint, exp.Func | exp.Var) else ""
            if name in SESSION_HINTS:
                yield Finding("session", f"the {name.upper()} hint")


NODE_RULES: tuple[NodeRule, ...] = (
    nested_statement,
    side_effect_function,
    unlisted_function,
    package_call,
    oracle_sequence,
    lock_hint,
    file_table,
    variable_assignment,
    optimizer_hint,
)
"""Every node rule, in the order their findings are reported."""


# ------------------------------------------------------------ helpers


def _function_names(node: exp.Func) -> list[str]:
    """Lower-case SQL names of a function call (an unknown function: its own name)."""
    if isinstance(node, exp.Anonymous):
        return [node.name.lower()]
    try:
        names = [name.lower() for name in node.sql_names()]
    except NotImplementedError:  # pragma: no cover - abstract classes only
        names = []
    return names or [node.key]


def _qualifier_parts(node: exp.Expr) -> list[str]:
    """Names in `a.b` before a function call (`a`, `b`), outermost first."""
    if isinstance(node, exp.Dot):
        return _qualifier_parts(node.this) + _qualifier_parts(node.expression)
    if isinstance(node, exp.Identifier | exp.Var | exp.Column):
        return [part.name for part in node.parts] if isinstance(node, exp.Column) else [node.name]
    return []


def _where(node: exp.Expr, root: exp.Expr) -> str:
    """ "inside a CTE" / "inside a subquery" / "" for a node of `root`'s tree."""
    inside_query = False
    parent = node.parent
    while parent is not None and parent is not root:
        if isinstance(parent, exp.CTE):
            return "inside a CTE"
        if isinstance(parent, exp.Subquery | exp.Query):
            inside_query = True
        parent = parent.parent
    return "inside a subquery" if inside_query else ""
