"""A name the user's SQL defines in its WITH clause, used without it: the definition put back.

A model asked to correct `WITH card_activity AS (...), months AS (...) SELECT
... FROM months LEFT JOIN card_activity ...` often rewrites only the final
SELECT and drops the WITH clause, so the candidate fails with "no such table:
card_activity". In an acts run with the 0.5B on 16 development tasks, 26 of
the 124 failing candidates (3 tasks) failed so. This rule puts the user's own
definitions of the names the statement reads but neither defines nor finds in
the schema back in front of it (with the definitions they read in turn, in
the user's order, `RECURSIVE` kept), so the candidate's own change is what
runs. The statement's text is kept as written; a statement with its own WITH
clause gets the missing definitions first in it. Needs the user's SQL
(`RuleInput.reference_sql`); applies only to a statement that fails.
"""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from acts_sql.sql._rewrite import BAD_SQL_ERRORS
from acts_sql.sql.diagnostics import parse_statements
from acts_sql.sql.rules.base import Repair, Rule, RuleInput, RuleOutcome, Stage

_LEADING_WITH = re.compile(r"^\s*WITH(\s+RECURSIVE)?\s+", re.IGNORECASE)


class MissingCte(Rule):
    """A table name only the user's WITH clause defines: the user's definition put back."""

    name = "missing_cte"
    stage = Stage.SYNTAX

    def check(self, given: RuleInput) -> RuleOutcome | None:
        if given.error is None or not given.reference_sql:
            return None
        defined = _definitions(given.reference_sql, given)
        if not defined:
            return None
        statements = parse_statements(given.sql, given.d)
        if len(statements) != 1:
            return None
        statement = statements[0]
        own = {cte.alias_or_name.lower() for cte in statement.find_all(exp.CTE)}
        missing = [
            name
            for name in _read_tables(statement)
            if name in defined and name not in own and given.facts.table(name) is None
        ]
        needed = _with_dependencies(missing, defined)
        if not needed or needed & own:
            return None  # nothing missing, or the statement redefines what the user's reads
        return _put_back(given, statement, [d for n, d in defined.items() if n in needed])


class _Definition:
    """One CTE of the user's SQL: its text as the user wrote it (as sqlglot writes it when
    the text cannot be found), the names it reads, whether its WITH is recursive."""

    def __init__(self, cte: exp.CTE, recursive: bool, text: str | None, dialect: str) -> None:
        self.name = cte.alias_or_name
        self.text = text or cte.sql(dialect=dialect)
        self.reads = _read_tables(cte.this)
        self.recursive = recursive


def _definitions(reference: str, given: RuleInput) -> dict[str, _Definition]:
    """name -> definition of every CTE of the user's statements' top-level WITH clauses,
    in the order written (an earlier statement's name loses to a later one's)."""
    try:
        statements = parse_statements(reference, given.d)
    except BAD_SQL_ERRORS:
        return {}
    texts = _written(reference, given)
    found: dict[str, _Definition] = {}
    for statement in statements:
        with_ = statement.args.get("with_")
        if not isinstance(with_, exp.With):
            continue
        recursive = bool(with_.args.get("recursive"))
        for cte in with_.expressions:
            name = cte.alias_or_name.lower()
            found[name] = _Definition(cte, recursive, texts.get(name), given.d.sqlglot_name)
    return found


def _written(reference: str, given: RuleInput) -> dict[str, str]:
    """name -> text of each definition of a WITH clause that starts a statement, cut from
    the user's SQL by its tokens: `name [(columns)] AS [MATERIALIZED] ( ... )`."""
    try:
        tokens = sqlglot.Dialect.get_or_raise(given.d.sqlglot_name).tokenize(reference)
    except BAD_SQL_ERRORS:
        return {}
    found: dict[str, str] = {}
    at = 0
    while at < len(tokens):
        starts = at == 0 or tokens[at - 1].token_type == TokenType.SEMICOLON
        if not (starts and tokens[at].token_type == TokenType.WITH):
            at += 1
            continue
        at += 1
        if at < len(tokens) and tokens[at].token_type == TokenType.RECURSIVE:
            at += 1
        while at < len(tokens):
            first = tokens[at]
            end = _body_end(tokens, at)
            if end is None:
                return found
            found[first.text.lower()] = reference[first.start : tokens[end].end + 1]
            at = end + 1
            if at >= len(tokens) or tokens[at].token_type != TokenType.COMMA:
                break
            at += 1
    return found


def _body_end(tokens: list[Token], at: int) -> int | None:
    """Index of the parenthesis that closes the body of the definition starting at `at`."""
    seen_as, depth = False, 0
    for index in range(at, len(tokens)):
        kind = tokens[index].token_type
        if kind == TokenType.ALIAS and depth == 0:
            seen_as = True
        elif kind == TokenType.L_PAREN:
            depth += 1
        elif kind == TokenType.R_PAREN:
            depth -= 1
            if depth == 0 and seen_as:
                return index
        elif kind == TokenType.SEMICOLON:
            return None
    return None


def _read_tables(node: exp.Expr) -> list[str]:
    """Unqualified table names `node` reads, lower case, in order, once each."""
    names = [t.name.lower() for t in node.find_all(exp.Table) if t.name and not t.args.get("db")]
    return list(dict.fromkeys(names))


def _with_dependencies(names: list[str], defined: dict[str, _Definition]) -> set[str]:
    needed: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in needed:
            continue
        needed.add(name)
        todo += [n for n in defined[name].reads if n in defined and n != name]
    return needed


def _put_back(
    given: RuleInput, statement: exp.Expr, definitions: list[_Definition]
) -> RuleOutcome | None:
    own_with = statement.args.get("with_")
    leading = _LEADING_WITH.match(given.sql)
    if own_with is not None and leading is None:
        return None  # a WITH clause somewhere else than in front: not rewritten by text
    recursive = any(d.recursive for d in definitions) or bool(leading and leading.group(1))
    head = "WITH RECURSIVE " if recursive else "WITH "
    listed = ",\n".join(d.text for d in definitions)
    if leading is not None:
        sql = f"{head}{listed},\n{given.sql[leading.end() :]}"
    else:
        sql = f"{head}{listed}\n{given.sql.strip()}"
    names = ", ".join(d.name for d in definitions)
    detail = f"the user's WITH definition(s) of {names}, which the statement reads"
    return RuleOutcome(repairs=[Repair(sql=sql, detail=detail)])
