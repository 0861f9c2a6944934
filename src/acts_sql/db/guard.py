"""What an executor may send: the read-only guard, and the sandbox policy for writes.

Every executor asks `admit(sql, dialect, allow_writes=...)` before anything
reaches the database:

- read-only (the default): `acts_sql.sql.safety.check_statement` decides;
- writes allowed (the statements run on a throw-away copy or inside a
  transaction that is always rolled back): reads, DML and DDL on ordinary
  objects pass; what could reach beyond the copy does not (CREATE/DROP/ALTER
  DATABASE, roles, grants, COPY, ATTACH, settings, USE and, for MySQL, names
  qualified with another database).

Text that the guard cannot parse comes back with `probe=True`: the executor
may then ask the server to parse it without running it (PREPARE), so that the
agent still sees the engine's own syntax error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlglot import exp

from acts_sql.db.result import ExecResult, blocked_result
from acts_sql.db.statements import Located, located, strip_leading_comments
from acts_sql.db.statements import split_statements as split_sqlite_statements
from acts_sql.errors import SqlParseError
from acts_sql.sql.diagnostics import parse_statements
from acts_sql.sql.dialects import Dialect, get_dialect
from acts_sql.sql.query_text import split_statements
from acts_sql.sql.safety import check_statement, findings

UNPARSEABLE = "unparseable"
WRITE_CATEGORIES = frozenset({"write", "ddl", "dml", "procedure"})
"""Guard categories that may run when writes are allowed (then checked again here)."""
WRITES_WITH_CALLS = WRITE_CATEGORIES | {"function"}
"""...and what the rest of such a text may hold: calls of functions off the allowlist."""

_READS = (exp.Query, exp.Values)
_WRITES = (exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.TruncateTable)
_DDL = (exp.Create, exp.Drop, exp.Alter)
_OBJECT_KINDS = frozenset(
    {"TABLE", "VIEW", "INDEX", "SEQUENCE", "FUNCTION", "PROCEDURE", "TRIGGER", "TYPE", "SCHEMA"}
)
_COMMANDS = frozenset({"CALL", "DO"})
"""Commands sqlglot does not model that a sandbox may run (routines, PL/pgSQL blocks)."""
_RAW_CREATE = re.compile(
    r"^\s*(?:OR\s+REPLACE\s+)?(?:TEMP(?:ORARY)?\s+)?(?:UNIQUE\s+|CONSTRAINT\s+)?(\w+)\b",
    re.IGNORECASE,
)
"""What a CREATE that sqlglot keeps as raw text creates: its object kind."""
_EXPLAIN_OPTIONS = re.compile(
    r"^\s*(?:\([^()]*\)\s*|(?:ANALY[SZ]E|VERBOSE|QUERY\s+PLAN|EXTENDED|FORMAT\s*=?\s*\w+)\s+)*",
    re.IGNORECASE,
)
"""The options between EXPLAIN and the statement it explains (PostgreSQL, SQLite, MySQL)."""
_SQLITE_TRIGGER = re.compile(r"^\s*CREATE\s+(?:TEMP(?:ORARY)?\s+)?TRIGGER\b", re.IGNORECASE)
_CODE = frozenset({"DO", "CREATE FUNCTION", "CREATE PROCEDURE"})
"""Statements that bring code the guard cannot read (see `_unreadable_code`)."""
_RAW_CREATE_DIALECTS = frozenset({"postgresql", "sqlite", "duckdb"})
"""Dialects where a raw CREATE of an ordinary object stays on the copy: object names there
cannot point into another database (MySQL's can, and raw text cannot be checked for it)."""


@dataclass(frozen=True)
class Admission:
    """May the text run? When not: the blocked result, and whether to probe."""

    allowed: bool
    reason: str = ""
    probe: bool = False
    writes: bool = False
    """Allowed as a write (on a sandbox, or to a scratch session's stand-ins), not as a
    plain read: an isolated run must then undo what it did."""

    def blocked(self, seconds: float = 0.0) -> ExecResult:
        return blocked_result(self.reason, seconds)


def admit(
    sql: str,
    dialect: str | Dialect,
    *,
    allow_writes: bool = False,
    database: str | None = None,
    stand_ins: frozenset[str] = frozenset(),
    routines: bool = True,
    catalog_functions: frozenset[str] | None = None,
) -> Admission:
    """Decide whether `sql` may be sent.

    `database`: with writes allowed on MySQL, the one database (the sandbox
    copy) that qualified names may name. `stand_ins`: names of a scratch
    session's own TEMP tables, which INSERT, UPDATE and DELETE may change.
    `routines=False`: with writes allowed, code the guard cannot read (DO
    blocks, new functions and procedures) is blocked too; executors pass it
    for a connection that could reach the server itself (a superuser).
    `catalog_functions`: the side-effect-free functions the executor read from the
    server's catalog, instead of the generated list (see `safety.check_statement`).
    """
    d = get_dialect(dialect)
    verdict = check_statement(sql, d, catalog_functions=catalog_functions)
    if verdict.allowed:
        return Admission(True)
    reason = verdict.reason or "not allowed"
    if verdict.category == UNPARSEABLE:
        return Admission(False, f"cannot be verified as read-only ({reason})", probe=True)
    if stand_ins and only_writes_to(sql, d, stand_ins):
        return Admission(True, writes=True)
    if not allow_writes or verdict.category not in WRITES_WITH_CALLS:
        probe = verdict.category == "function" and _only_unlisted_calls(sql, d, catalog_functions)
        return Admission(False, reason, probe=probe)
    beyond = _beyond_sandbox(sql, d, catalog_functions)
    if beyond is not None:
        return Admission(False, beyond)
    problem = sandbox_violation(sql, d, database, routines=routines)
    return Admission(problem is None, problem or "", writes=problem is None)


def _only_unlisted_calls(
    sql: str, dialect: Dialect, catalog_functions: frozenset[str] | None
) -> bool:
    """True when all that blocks `sql` is calls off the allowlist: such a function may not
    exist at all, and the server's parse-only probe (never run) then gives the agent the
    engine's own "function ... does not exist" error; anything else stays unprobed."""
    found = findings(sql, dialect, catalog_functions=catalog_functions)
    return bool(found) and all(finding.category == "function" for finding in found)


def _beyond_sandbox(
    sql: str, dialect: Dialect, catalog_functions: frozenset[str] | None
) -> str | None:
    """Why `sql` must not run even with writes allowed, judged on every finding (not only
    the first): `DELETE ...; SELECT pg_terminate_backend(...)` is blocked for the call.
    A function off the allowlist may run on the copy (the copy's own routines, as `CALL`
    does); always-blocked ones never do."""
    for finding in findings(sql, dialect, catalog_functions=catalog_functions):
        if finding.category not in WRITES_WITH_CALLS:
            return finding.reason()
    return None


def sandbox_violation(
    sql: str, dialect: Dialect, database: str | None = None, *, routines: bool = True
) -> str | None:
    """Why `sql` must not run even on a sandbox copy, or None when it may."""
    if dialect.name == "sqlite":
        sql = _without_sqlite_triggers(sql)
        if not sql:
            return None
    try:
        statements = parse_statements(sql, dialect)
    except SqlParseError as error:
        return f"cannot be checked: {error}"
    for statement in statements:
        problem = _statement_violation(statement, dialect, database)
        if problem is None and not routines:
            problem = _unreadable_code(statement)
        if problem is not None:
            return problem
    return None


def _unreadable_code(statement: exp.Expr) -> str | None:
    """Why `statement` must not run on a connection that can reach the server, or None.

    A DO block or a new function or procedure holds code the guard cannot read; run by a
    superuser it could start server programs or write server files (COPY ... TO PROGRAM
    through dynamic SQL), which no copy contains."""
    if isinstance(statement, exp.Command):
        word = str(statement.this or "").upper()
        match = _RAW_CREATE.match(str(statement.args.get("expression") or ""))
        what = f"CREATE {match.group(1).upper()}" if word == "CREATE" and match else word
    elif isinstance(statement, exp.Create):
        what = f"CREATE {str(statement.args.get('kind') or '').upper()}"
    else:
        return None
    if what not in _CODE:
        return None
    return (
        f"{what} is not allowed: this connection may run server programs or write server "
        "files (a superuser), and the guard cannot read the code it would run; "
        "connect as an ordinary user to let routines run on the copy"
    )


def _statement_violation(statement: exp.Expr, dialect: Dialect, database: str | None) -> str | None:
    if isinstance(statement, exp.Command):
        word = str(statement.this or "").upper()
        if word == "CREATE" and dialect.name in _RAW_CREATE_DIALECTS:
            return _raw_create_violation(str(statement.args.get("expression") or ""))
        if word == "EXPLAIN":
            explained = statement.args.get("expression")
            text = explained.name if isinstance(explained, exp.Literal) else str(explained or "")
            return _explained_violation(text, dialect, database)
        return None if word in _COMMANDS else f"{word} is not allowed in the sandbox"
    if isinstance(statement, exp.Describe) and not isinstance(statement.this, exp.Table):
        # MySQL's EXPLAIN [ANALYZE|FORMAT=...] of a statement, modelled: judged as that statement
        return _statement_violation(statement.this, dialect, database)
    if isinstance(statement, _DDL):
        kind = str(statement.args.get("kind") or "").upper()
        if kind not in _OBJECT_KINDS or (kind == "SCHEMA" and dialect.name == "mysql"):
            return f"{statement.key.upper()} {kind or '?'} is not allowed in the sandbox"
    elif not isinstance(statement, _READS + _WRITES + (exp.Describe,)):
        return f"{statement.key.upper()} is not allowed in the sandbox"
    for table in statement.find_all(exp.Table):
        if table.args.get("catalog") is not None:
            return "names qualified with a database are not allowed in the sandbox"
        schema = table.db
        if dialect.name == "mysql" and schema and schema != database:
            return f"tables of other databases ({schema}) are not allowed in the sandbox"
    return None


def _explained_violation(rest: str, dialect: Dialect, database: str | None) -> str | None:
    """EXPLAIN (ANALYZE, ...) of a statement: on the copy as the statement itself would be
    (EXPLAIN ANALYZE runs it). A plan is what a performance issue is about."""
    inner = _EXPLAIN_OPTIONS.sub("", rest, count=1).strip()
    if not inner:
        return "EXPLAIN without a statement is not allowed in the sandbox"
    try:
        statements = parse_statements(inner, dialect)
    except SqlParseError as error:
        return f"cannot be checked: {error}"
    if len(statements) != 1:
        return "EXPLAIN of more than one statement is not allowed in the sandbox"
    return _statement_violation(statements[0], dialect, database)


def _without_sqlite_triggers(sql: str) -> str:
    """`sql` without its CREATE TRIGGER statements, split as SQLite splits them.

    sqlglot cuts a trigger at the first `;` of its body; on the copy a trigger is an
    ordinary object, and its body can only read and change the copy's rows (SQLite's
    authorizer still checks every action, ATTACH included, when the trigger fires).
    """
    pieces = split_sqlite_statements(sql)
    kept = [p for p in pieces if not _SQLITE_TRIGGER.match(strip_leading_comments(p))]
    return sql if len(kept) == len(pieces) else ";\n".join(kept)


def _raw_create_violation(rest: str) -> str | None:
    """A CREATE sqlglot could not model (PostgreSQL routines with options it lacks, SQLite
    triggers with WHEN): allowed when it creates an ordinary object (a routine, trigger,
    view, ...), as a modelled CREATE of that object would be."""
    match = _RAW_CREATE.match(rest)
    kind = match.group(1).upper() if match else "?"
    if kind in _OBJECT_KINDS and kind != "SCHEMA":
        return None
    return f"CREATE {kind} is not allowed in the sandbox"


def only_writes_to(sql: str, dialect: Dialect, tables: frozenset[str]) -> bool:
    """True when every statement is a read, or an INSERT/UPDATE/DELETE of one of `tables`.

    Names compare case-insensitively and must be unqualified.
    """
    try:
        statements = parse_statements(sql, dialect)
    except SqlParseError:
        return False
    wanted = {name.lower() for name in tables}
    for statement in statements:
        if isinstance(statement, _READS) and statement.find(exp.Into) is None:
            if any(isinstance(node, _WRITES) for node in statement.walk()):
                return False
            continue
        if not isinstance(statement, exp.Insert | exp.Update | exp.Delete):
            return False
        target = statement.this
        while isinstance(target, exp.Schema):  # INSERT INTO t (a, b)
            target = target.this
        if not isinstance(target, exp.Table) or target.db or target.catalog:
            return False
        if target.name.lower() not in wanted:
            return False
        for node in statement.walk():
            if node is not statement and isinstance(node, _WRITES):
                return False
    return True


def located_statements(sql: str, dialect: str | Dialect) -> Located:
    """The statements of `sql` with the 0-based offset where each starts in `sql`."""
    return located(sql, split_statements(sql, dialect))


def caret_context(text: str, position: int) -> str:
    """psql-style 'LINE n: ...' and a caret under 1-based character `position` of `text`."""
    index = max(0, min(position - 1, len(text)))
    line_start = text.rfind("\n", 0, index) + 1
    line_end = text.find("\n", index)
    line_end = len(text) if line_end < 0 else line_end
    line_no = text.count("\n", 0, index) + 1
    prefix = f"LINE {line_no}: "
    line = text[line_start:line_end]
    return f"{prefix}{line}\n{' ' * (len(prefix) + index - line_start)}^"
