"""The read-only guard: may this SQL run against a user's database?

Fails closed: a text is allowed only when every statement in it is known to
be a read and nothing inside it writes, locks, changes settings, calls
procedures, reaches files or other servers, or loads extensions. Anything
sqlglot cannot parse, keeps as raw text (a `Command`) or represents with a
statement class the rules do not know is blocked. Pure: no I/O.

    >>> check_statement("SELECT 1", "sqlite").allowed
    True
    >>> check_statement("DROP TABLE users", "sqlite").reason
    'writes are not allowed: DROP TABLE'
    >>> check_statement("WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", "pg").reason
    'writes are not allowed: DELETE inside a CTE'

Decisions (see docs/DATABASES.md, "The read-only guard"):

- Transaction control (BEGIN, COMMIT, ROLLBACK, SAVEPOINT) is always
  blocked: the executor owns the transaction, and a COMMIT or ROLLBACK of the
  agent's would end the transaction that keeps its writes from sticking.
- EXPLAIN is allowed exactly when the explained statement is (with ANALYZE it
  runs, but it is a read that passed the guard); Oracle's EXPLAIN PLAN writes
  a plan table and is blocked.
- SHOW and DESCRIBE are reads; ANALYZE, VACUUM and friends are administration.

The rules themselves are small functions over data tables in
`acts_sql.sql.safety_rules`.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel

from acts_sql.errors import SqlParseError
from acts_sql.sql.diagnostics import parse_statements
from acts_sql.sql.dialects import Dialect, get_dialect
from acts_sql.sql.safety_rules import (
    TEXT_RULES,
    Category,
    Context,
    Finding,
    judge_nodes,
    judge_root,
    unparsed_findings,
)
from acts_sql.sql.safety_rules.escapes import EscapeError, decode_unicode_escapes

PERMIT_ON_COPY: frozenset[Category] = frozenset({"write", "ddl", "sequence", "lock"})
"""What an executor may let through when statements run on a throw-away copy."""

PERMIT_IN_ROLLBACK: frozenset[Category] = frozenset({"write", "ddl"})
"""...inside a transaction that is always rolled back, on an engine whose DDL
is transactional (PostgreSQL, SQLite, DuckDB, SQL Server). Sequences are not
rolled back, and locks would be held on the user's database."""

PERMIT_IN_ROLLBACK_NO_DDL: frozenset[Category] = frozenset({"write"})
"""...inside a rolled-back transaction on an engine where DDL commits
implicitly (Oracle, MySQL): DML only."""

PERMITTABLE: frozenset[Category] = PERMIT_ON_COPY
"""The only categories a caller may permit; the others never run."""


class SafetyVerdict(BaseModel):
    """Whether a text may run read-only; when not, why (shown to the agent)."""

    allowed: bool
    reason: str | None = None
    """What the agent sees after "blocked: ", e.g. "writes are not allowed: DROP TABLE"."""
    category: Category | None = None
    """One of `safety_rules.Category`: write, ddl, dcl, admin, transaction,
    session, procedure, file, network, extension, lock, sequence, hidden,
    unknown, unparseable (the executor may then ask the server for a
    non-executing parse, to report the engine's own syntax error), empty."""


def check_statement(
    sql: str,
    dialect: str | Dialect,
    *,
    permit: Iterable[Category] = (),
    catalog_functions: frozenset[str] | None = None,
) -> SafetyVerdict:
    """Verdict for a text of one or more statements in `dialect`.

    `permit` lists categories the caller sandboxes itself (see
    `PERMIT_ON_COPY`, `PERMIT_IN_ROLLBACK`); by default nothing but reads
    passes. Raises ValueError for a category outside `PERMITTABLE`.
    `catalog_functions`: the side-effect-free function names an executor read from the
    connected server's catalog; they replace the generated allowlist (never over
    `functions.ALWAYS_BLOCKED`).
    """
    permitted = frozenset(permit)
    if not permitted <= PERMITTABLE:
        extra = ", ".join(sorted(permitted - PERMITTABLE))
        raise ValueError(f"categories that can never be permitted: {extra}")
    for finding in findings(sql, dialect, catalog_functions=catalog_functions):
        if finding.category not in permitted:
            return SafetyVerdict(allowed=False, reason=finding.reason(), category=finding.category)
    return SafetyVerdict(allowed=True)


def findings(
    sql: str, dialect: str | Dialect, *, catalog_functions: frozenset[str] | None = None
) -> list[Finding]:
    """Every reason to block `sql` (empty for a plain read), in text order.

    PostgreSQL's `U&` escapes are decoded first (`escapes.decode_unicode_escapes`):
    the rules read names as the engine will; an escape it would reject blocks."""
    d = get_dialect(dialect)
    found = [finding for rule in TEXT_RULES for finding in rule(sql, d)]
    try:
        sql = decode_unicode_escapes(sql, d)
    except EscapeError as error:
        return [*found, Finding("unparseable", f"{error} (in a U& escape)")]
    try:
        statements = parse_statements(sql, d)
    except SqlParseError as error:
        return [*found, *(unparsed_findings(sql, d) or [Finding("unparseable", str(error))])]
    if not statements:
        return [*found, Finding("empty", "")]
    ctx = Context(
        dialect=d,
        check_text=lambda text: findings(text, d, catalog_functions=catalog_functions),
        catalog_functions=catalog_functions,
    )
    total = len(statements)
    for index, statement in enumerate(statements, start=1):
        here = judge_root(statement, ctx) + judge_nodes(statement, ctx)
        if total > 1:
            here = [finding.located(f"in statement {index} of {total}") for finding in here]
        found.extend(here)
    return found
