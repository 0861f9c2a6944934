"""Can a task be scored on an empty database? Only if the SQL that runs creates every table it uses.

The benchmark's original databases are not available here. A task is
*evaluable* when every table that the SQL the evaluator runs for it reads or
writes is created by that same SQL (CREATE TABLE / VIEW, SELECT ... INTO,
ALTER ... RENAME TO), not counting CTEs, table functions and system catalogs.
What runs (``required_statements``): ``preprocess_sql``; the solution (what a
right prediction has to do; the issue SQL stands in for it when there is no
solution); the SQL the test cases visibly run (``test_sql``); ``clean_up_sql``;
and the issue SQL only where the official evaluator runs it: efficiency tasks
(it goes to the tests as ``pred_sqls``) and SQLite (the "issue SQL must fail"
pre-check). A name that any statement of the task defines as a CTE is never
taken for a table. The check is static (sqlglot); statements it cannot parse
contribute only the tables they visibly create. The evaluator adds a dynamic
check: a task whose ``preprocess_sql`` fails on a missing table is not
evaluable either.
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
from acts_sql.bench.test_sql import visible_sql

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
        self.ctes: set[str] = set()
        self.unparsed = 0

    def add(self, sql: str) -> None:
        """A statement that runs: its tables are needed, its creations count."""
        for tree in self._parse(sql, count=True):
            self._tree(tree)

    def add_ctes(self, sql: str) -> None:
        """A statement that does not run: only its CTE names are learnt (they are no tables)."""
        for tree in self._parse(sql, count=False):
            self.ctes.update(cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE))

    def _parse(self, sql: str, *, count: bool) -> list[exp.Expression]:
        try:
            with _quiet_sqlglot():
                trees = sqlglot.parse(sql, read=self.read)
        except SqlglotError:
            if count:
                self.unparsed += 1
                self.created.update(_bare(m) for m in _CREATE_PATTERN.findall(sql))
            return []
        return [tree for tree in trees if isinstance(tree, exp.Expression)]

    def missing(self) -> list[str]:
        return sorted(self.referenced - self.created - self.ctes)

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
        self.ctes.update(cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE))
        for table in tree.find_all(exp.Table):
            if id(table) in skip or not isinstance(table.this, exp.Identifier):
                continue
            name = table.name.lower()
            if name and not _is_system(table):
                self.referenced.add(name)


def check_statements(
    statements: Iterable[str], dialect: str, *, not_run: Iterable[str] = ()
) -> Evaluability:
    """Evaluability of a list of statements that run together.

    ``not_run``: statements of the task that do not run; only their CTE names
    are used (a name defined as a CTE anywhere is not a table).
    """
    if dialect not in {d.value for d in SCORABLE_DIALECTS}:
        return Evaluability(evaluable=False, reason=f"no {dialect} server to evaluate on here")
    scan = _Scan(Dialect(dialect))
    for sql in statements:
        if sql and sql.strip():
            scan.add(sql)
    for sql in not_run:
        if sql and sql.strip():
            scan.add_ctes(sql)
    missing = scan.missing()
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


def issue_sql_runs(item: ScoredTask) -> bool:
    """Whether the official evaluator runs the issue SQL of this task in ``pred`` mode."""
    task = item.task
    return task.efficiency or task.dialect == Dialect.SQLITE


def required_statements(item: ScoredTask) -> list[str]:
    """The statements whose tables the task must create (see the module doc)."""
    task, solution = item.task, item.solution
    statements = list(task.preprocess_sql)
    if solution is None:
        statements += task.issue_sql
    else:
        statements += solution.sol_sql
        if issue_sql_runs(item):
            statements += task.issue_sql
        for source in solution.test_cases:
            statements += visible_sql(source)
    return statements + task.clean_up_sql


def check_task(item: ScoredTask) -> Evaluability:
    """Evaluability of one task: the statements that run for it (``required_statements``)."""
    required = required_statements(item)
    skipped = [sql for sql in item.task.issue_sql if sql not in required]
    return check_statements(required, item.task.dialect, not_run=skipped)
