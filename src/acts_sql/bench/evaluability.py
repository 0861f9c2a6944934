"""Can a task be scored on an empty database? Only if its own SQL creates every table it uses.

The benchmark's original databases are not available here. A task is
*evaluable* when every table that its ``preprocess_sql``, ``issue_sql`` and (if
known) ``sol_sql`` read or write is created by those same statements (CREATE
TABLE / VIEW, SELECT ... INTO, ALTER ... RENAME TO), not counting CTEs, table
functions and system catalogs. The check is static (sqlglot); statements it
cannot parse contribute only the tables they visibly create. The evaluator
adds a dynamic check: a task whose ``preprocess_sql`` fails on a missing table
is not evaluable either.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterable, Iterator

import sqlglot
from pydantic import BaseModel, Field
from sqlglot import exp
from sqlglot.errors import SqlglotError

from acts_sql.bench.models import Dialect, ScoredTask

SQLGLOT_DIALECTS = {
    Dialect.POSTGRESQL: "postgres",
    Dialect.MYSQL: "mysql",
    Dialect.SQLITE: "sqlite",
    Dialect.SQLSERVER: "tsql",
    Dialect.ORACLE: "oracle",
}
SCORABLE_DIALECTS = {Dialect.POSTGRESQL, Dialect.MYSQL, Dialect.SQLITE}
SYSTEM_SCHEMAS = {"pg_catalog", "information_schema", "mysql", "performance_schema", "sys"}
SYSTEM_PREFIXES = ("pg_", "sqlite_")
SYSTEM_TABLES = {"dual"}
_CREATED_KINDS = {"TABLE", "VIEW", "FUNCTION", "PROCEDURE", "TYPE"}
"""Objects that can stand in a FROM clause once created (set-returning functions too)."""
_CREATE_PATTERN = re.compile(
    r"\bCREATE\s+(?:OR\s+REPLACE\s+)?(?:(?:GLOBAL|LOCAL)\s+)?(?:TEMP(?:ORARY)?\s+|UNLOGGED\s+)?"
    r"(?:MATERIALIZED\s+)?(?:TABLE|VIEW|FUNCTION|PROCEDURE|TYPE)\s+(?:IF\s+NOT\s+EXISTS\s+)?"
    r"([\w.\"`\[\]]+)",
    re.IGNORECASE,
)


@contextlib.contextmanager
def _quiet_sqlglot() -> Iterator[None]:
    """sqlglot logs a warning for every statement it keeps as a raw command; not news here."""
    logger = logging.getLogger("sqlglot")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


class Evaluability(BaseModel):
    """The verdict for one task, with the tables that decided it."""

    evaluable: bool
    reason: str = ""
    missing: list[str] = Field(default_factory=list)
    created: list[str] = Field(default_factory=list)
    unparsed: int = 0


def _bare(name: str) -> str:
    """The object name of a possibly qualified, possibly quoted name, lower case."""
    return name.split(".")[-1].strip().strip('"`[]').lower()


def _is_system(table: exp.Table) -> bool:
    schema = (table.db or "").lower()
    name = table.name.lower()
    return schema in SYSTEM_SCHEMAS or name.startswith(SYSTEM_PREFIXES) or name in SYSTEM_TABLES


class _Scan:
    """Tables read/written and tables created, over a list of statements."""

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect
        self.read = SQLGLOT_DIALECTS[dialect]
        self.referenced: set[str] = set()
        self.created: set[str] = set()
        self.unparsed = 0

    def add(self, sql: str) -> None:
        try:
            with _quiet_sqlglot():
                trees = sqlglot.parse(sql, read=self.read)
        except SqlglotError:
            trees = []
            self.unparsed += 1
            self.created.update(_bare(m) for m in _CREATE_PATTERN.findall(sql))
            return
        for tree in trees:
            if isinstance(tree, exp.Expression):
                self._tree(tree)

    def _tree(self, tree: exp.Expression) -> None:
        if isinstance(tree, exp.Drop | exp.Command):
            if isinstance(tree, exp.Command):
                self.created.update(_bare(m) for m in _CREATE_PATTERN.findall(tree.sql()))
            return
        skip: set[int] = set()
        if isinstance(tree, exp.Create):
            target = tree.this
            if isinstance(target, exp.Schema | exp.UserDefinedFunction):
                target = target.this
            if isinstance(target, exp.Table):
                skip.add(id(target))
                if (tree.kind or "").upper() in _CREATED_KINDS:
                    self.created.add(target.name.lower())
        for into in tree.find_all(exp.Into):
            table = into.this
            if isinstance(table, exp.Table):
                skip.add(id(table))
                self.created.add(table.name.lower())
        if isinstance(tree, exp.Alter):  # constraint names in the actions are not tables
            for action in tree.args.get("actions") or []:
                kept = {
                    id(t) for r in action.find_all(exp.Reference) for t in r.find_all(exp.Table)
                }
                skip.update(id(t) for t in action.find_all(exp.Table) if id(t) not in kept)
        for node in tree.find_all(exp.AlterRename):
            table = node.this
            if isinstance(table, exp.Table):
                skip.add(id(table))
                self.created.add(table.name.lower())
        if self.dialect == Dialect.SQLITE:  # SQLite does not check foreign keys by default
            for reference in tree.find_all(exp.Reference):
                skip.update(id(t) for t in reference.find_all(exp.Table))
        ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
        for table in tree.find_all(exp.Table):
            if id(table) in skip or not isinstance(table.this, exp.Identifier):
                continue
            name = table.name.lower()
            if name and name not in ctes and not _is_system(table):
                self.referenced.add(name)


def check_statements(statements: Iterable[str], dialect: str) -> Evaluability:
    """Evaluability of a list of statements taken together."""
    if dialect not in {d.value for d in SCORABLE_DIALECTS}:
        return Evaluability(evaluable=False, reason=f"no {dialect} server to evaluate on here")
    scan = _Scan(Dialect(dialect))
    for sql in statements:
        if sql and sql.strip():
            scan.add(sql)
    missing = sorted(scan.referenced - scan.created)
    if missing:
        shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
        return Evaluability(
            evaluable=False,
            reason=f"uses tables its SQL does not create: {shown}",
            missing=missing,
            created=sorted(scan.created),
            unparsed=scan.unparsed,
        )
    return Evaluability(evaluable=True, created=sorted(scan.created), unparsed=scan.unparsed)


def check_task(item: ScoredTask) -> Evaluability:
    """Evaluability of one task: its preprocess, issue and (if known) solution SQL."""
    task = item.task
    statements = [*task.preprocess_sql, *task.issue_sql]
    if item.solution is not None:
        statements += item.solution.sol_sql
    return check_statements(statements, task.dialect)
