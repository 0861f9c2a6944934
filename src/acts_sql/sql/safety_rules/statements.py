"""Rules over a whole statement (the root of its tree).

`judge_root` decides what the statement itself is: a read (no finding), or
what it does. The statement's tree is walked by the node rules afterwards
whatever this says, so a read root can still be blocked for what it holds.
"""

from __future__ import annotations

import re

from sqlglot import exp

from acts_sql.sql.dialects import Dialect
from acts_sql.sql.query_text import split_statements
from acts_sql.sql.safety_rules.findings import Context, Finding
from acts_sql.sql.safety_rules.tables import (
    ARGUMENT_READ_PRAGMAS,
    BARE_READ_PRAGMAS,
    COMMAND_KINDS,
    EXPLAIN_OPTION,
    EXPLAIN_PLAN,
    OBJECT_KINDS,
    READ_ROOTS,
    SHOW_TAIL,
    STATEMENT_KINDS,
    Kind,
)


def judge_root(statement: exp.Expr, ctx: Context) -> list[Finding]:
    """What the statement itself does; empty when it is a read."""
    name = type(statement).__name__
    if name in READ_ROOTS:
        return []
    if isinstance(statement, exp.Pragma):
        return pragma_findings(statement)
    if isinstance(statement, exp.Command):
        return command_findings(statement, ctx)
    return [Finding.of(statement_kind(statement))]


def statement_kind(node: exp.Expr) -> Kind:
    """The kind of a statement-like node, wherever it is (see `STATEMENT_KINDS`).

    CREATE, DROP and ALTER are refined by the kind of object (DROP DATABASE is
    administration, DROP TABLE is DDL); a Command by its first keyword; a
    class the tables do not know is "unknown".
    """
    name = type(node).__name__
    if isinstance(node, exp.Command):
        return command_kind(node)
    kind = STATEMENT_KINDS.get(name)
    if kind is None:
        return Kind("unknown", name.upper())
    if isinstance(node, exp.Create | exp.Drop | exp.Alter):
        return object_kind(kind, str(node.args.get("kind") or ""))
    if isinstance(node, exp.Lock):
        return Kind(
            "lock", "SELECT ... FOR UPDATE" if node.args.get("update") else "SELECT ... FOR SHARE"
        )
    return kind


def object_kind(verb: Kind, object_kind: str) -> Kind:
    """`CREATE`/`DROP`/`ALTER` of `object_kind`: its category from `OBJECT_KINDS`."""
    obj = object_kind.strip().upper()
    label = f"{verb.label} {obj}".strip()
    return Kind(OBJECT_KINDS.get(obj, verb.category), label)


def command_kind(node: exp.Command) -> Kind:
    """A statement sqlglot kept as text, by its first keyword (and, for
    CREATE/DROP/ALTER, its second)."""
    words = f"{node.this} {_command_tail(node)}".split()
    head = words[0].upper() if words else ""
    kind = COMMAND_KINDS.get(head)
    if kind is None:
        return Kind("unknown", head or "statement")
    if head in ("CREATE", "DROP", "ALTER") and len(words) > 1:
        return object_kind(kind, words[1])
    return kind


_WORDS = re.compile(r"[A-Za-z_]+")


def unparsed_findings(sql: str, dialect: Dialect) -> list[Finding]:
    """For text sqlglot cannot parse: statements whose first keyword alone
    says they are not reads (`CHECKPOINT`, `NOTIFY c`, `START TRANSACTION`).
    Empty when no statement tells, and the text stays "unparseable"."""
    texts = split_statements(sql, dialect)
    found: list[Finding] = []
    for index, text in enumerate(texts, start=1):
        words = _WORDS.findall(text[:200])
        head = words[0].upper() if words else ""
        kind = COMMAND_KINDS.get(head)
        if kind is None:
            continue
        if head in ("CREATE", "DROP", "ALTER") and len(words) > 1:
            kind = object_kind(kind, words[1])
        where = f"in statement {index} of {len(texts)}" if len(texts) > 1 else ""
        found.append(Finding.of(kind, where))
    return found


def command_findings(node: exp.Command, ctx: Context) -> list[Finding]:
    """A Command root: SHOW of one setting is a read; EXPLAIN is judged by
    the statement it explains; anything else by `command_kind`."""
    tail = _command_tail(node)
    head = " ".join(str(node.this).split()[:1]).upper()
    if head == "SHOW" and SHOW_TAIL.match(tail):
        return []
    if head == "EXPLAIN":
        return explain_findings(tail, ctx)
    return [Finding.of(command_kind(node))]


def explain_findings(tail: str, ctx: Context) -> list[Finding]:
    """EXPLAIN [options] <statement>: allowed exactly when <statement> is.

    With ANALYZE the statement runs, but it has passed the guard itself.
    Oracle's EXPLAIN PLAN writes into a plan table and is blocked.
    """
    rest = tail
    while match := EXPLAIN_OPTION.match(rest):
        rest = rest[match.end() :]
    if EXPLAIN_PLAN.match(rest):
        return [Finding("write", "EXPLAIN PLAN (it writes a plan table)")]
    if not rest.strip():
        return [Finding("unknown", "EXPLAIN without a statement")]
    return [finding.located("in EXPLAIN") for finding in ctx.check_text(rest)]


def pragma_findings(node: exp.Pragma) -> list[Finding]:
    """A PRAGMA is a read when it is a known read pragma: one that only names
    what to read (`table_info(t)`), or a setting read without an argument."""
    name, has_argument = _pragma_name(node.this)
    if name is None:
        return [Finding("unknown", "PRAGMA")]
    if name in ARGUMENT_READ_PRAGMAS:
        return []
    if name in BARE_READ_PRAGMAS and not has_argument:
        return []
    label = f"PRAGMA {name}" + (" with a value" if has_argument else "")
    return [Finding("session", label)]


def _pragma_name(body: exp.Expr | None) -> tuple[str | None, bool]:
    """(lower-case pragma name, whether it has an argument) of a PRAGMA body."""
    has_argument = False
    if isinstance(body, exp.EQ):
        body, has_argument = body.this, True
    elif isinstance(body, exp.Anonymous):
        return body.name.lower(), bool(body.expressions)
    if isinstance(body, exp.Dot):  # schema.pragma
        body = body.expression
    if isinstance(body, exp.Var | exp.Column | exp.Identifier | exp.Anonymous):
        return body.name.lower(), has_argument or bool(body.args.get("expressions"))
    return None, has_argument


def _command_tail(node: exp.Command) -> str:
    tail = node.args.get("expression")
    if isinstance(tail, exp.Literal):
        return str(tail.this)
    return tail.sql() if isinstance(tail, exp.Expr) else str(tail or "")
