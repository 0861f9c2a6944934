"""Two statements run together: the semicolon between them is missing.

A small model that answers in steps ("-- Step 1 ...", "-- Step 2 ...") often writes
each step's statement on its own lines without ending the one before, and the database
stops at the second one's first word (`syntax error at or near "WITH"`). This rule puts a
semicolon before every word that starts a statement (WITH, SELECT, INSERT, UPDATE, DELETE,
CREATE, ALTER, DROP) that begins a line outside parentheses, unless the word before it is
a semicolon or continues the statement into it (AS, UNION, ALL, DISTINCT, a comma, THEN,
ELSE, BEGIN, INTO), or it is the SELECT that gives an `INSERT INTO t (a, b)` its rows.
The semicolon goes right after the earlier statement's last word, before any comment on
that line. The repair is kept only when every resulting statement parses strictly in the
dialect. Applies only to a statement that fails with a syntax error.
"""

from __future__ import annotations

from itertools import pairwise

from sqlglot.tokens import Token, TokenType

from acts_sql.sql._rewrite import parses
from acts_sql.sql.rules._tokens import failed_tokens
from acts_sql.sql.rules.base import Repair, Rule, RuleInput, RuleOutcome, Stage

_STARTS = {
    TokenType.WITH,
    TokenType.SELECT,
    TokenType.INSERT,
    TokenType.UPDATE,
    TokenType.DELETE,
    TokenType.CREATE,
    TokenType.ALTER,
    TokenType.DROP,
}
"""Tokens that start a statement."""
_CONTINUED = {
    TokenType.ALIAS,
    TokenType.UNION,
    TokenType.INTERSECT,
    TokenType.EXCEPT,
    TokenType.ALL,
    TokenType.DISTINCT,
    TokenType.COMMA,
    TokenType.THEN,
    TokenType.ELSE,
    TokenType.BEGIN,
    TokenType.INTO,
}
"""Tokens after which a statement's first word continues the statement (`AS SELECT`, `UNION
SELECT`, `THEN UPDATE`, ...)."""


class MissingSemicolon(Rule):
    """Statements on their own lines without a semicolon between them: one inserted."""

    name = "missing_semicolon"
    stage = Stage.SYNTAX

    def check(self, given: RuleInput) -> RuleOutcome | None:
        tokens = failed_tokens(given.sql, given.error, given.d)
        if tokens is None:
            return None
        ends = _ends(given.sql, tokens)
        bounds = [0, *ends, len(given.sql)]
        parts = [given.sql[a:b] for a, b in pairwise(bounds)]
        if not ends or not all(parses(part, given.d) for part in parts):
            return None
        detail = f"ended {len(ends)} statement(s) run together with the next"
        return RuleOutcome(repairs=[Repair(sql=";".join(parts), detail=detail)])


def _ends(sql: str, tokens: list[Token]) -> list[int]:
    """Text offsets just after a statement's last token, where the next token starts a
    statement on a later line, outside parentheses (a semicolon goes there: before any
    comment that follows on the same line)."""
    found: list[int] = []
    depth = 0
    for index, token in enumerate(tokens):
        if token.token_type == TokenType.L_PAREN:
            depth += 1
        elif token.token_type == TokenType.R_PAREN:
            depth = max(depth - 1, 0)
        if index == 0 or depth > 0 or token.token_type not in _STARTS:
            continue
        before = tokens[index - 1]
        if before.token_type in _CONTINUED or before.token_type == TokenType.SEMICOLON:
            continue
        if "\n" in sql[before.end + 1 : token.start] and not _feeds(tokens, index):
            found.append(before.end + 1)
    return found


def _feeds(tokens: list[Token], index: int) -> bool:
    """Whether the SELECT or WITH at `index` is the rows of an INSERT begun before it with
    no VALUES yet (`INSERT INTO t (a, b)` then `SELECT ...` on the next line)."""
    if tokens[index].token_type not in (TokenType.SELECT, TokenType.WITH):
        return False
    for token in reversed(tokens[:index]):
        if token.token_type in (TokenType.SEMICOLON, TokenType.VALUES):
            return False
        if token.token_type == TokenType.INSERT:
            return True
    return False
