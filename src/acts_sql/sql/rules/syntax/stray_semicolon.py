"""A semicolon inside a statement: inside parentheses, or before a clause that continues it.

Issue texts quote SQL with slips of their own (`SELECT id, id::TEXT AS Path;`
followed by `FROM collection` inside a CTE), and a model copies them: in the
kept runs of one development task, 9 candidates failed so ("syntax error at
end of input"). A semicolon ends a statement only outside parentheses and
only where the next word can start one; this rule removes each semicolon
inside parentheses and each one followed by a clause that only continues a
statement (FROM, WHERE, GROUP BY, ORDER BY, HAVING, LIMIT, a JOIN, UNION, AND,
OR, ON, a closing parenthesis). Semicolons in strings, comments and quoted
names are tokens of those, not semicolons, and stay. The text is otherwise
kept as written. Applies only to a statement that fails.
"""

from __future__ import annotations

import sqlglot
from sqlglot.tokens import Token, TokenType

from acts_sql.sql._rewrite import BAD_SQL_ERRORS
from acts_sql.sql.rules.base import Repair, Rule, RuleInput, RuleOutcome, Stage

_CONTINUES = {
    TokenType.FROM,
    TokenType.WHERE,
    TokenType.GROUP_BY,
    TokenType.ORDER_BY,
    TokenType.HAVING,
    TokenType.LIMIT,
    TokenType.OFFSET,
    TokenType.JOIN,
    TokenType.INNER,
    TokenType.LEFT,
    TokenType.RIGHT,
    TokenType.FULL,
    TokenType.CROSS,
    TokenType.OUTER,
    TokenType.UNION,
    TokenType.INTERSECT,
    TokenType.EXCEPT,
    TokenType.AND,
    TokenType.OR,
    TokenType.ON,
    TokenType.R_PAREN,
}
"""Tokens that cannot start a statement, only continue one."""


class StraySemicolon(Rule):
    """A semicolon inside parentheses or before FROM/WHERE/JOIN/...: removed."""

    name = "stray_semicolon"
    stage = Stage.SYNTAX
    lexical = True

    def check(self, given: RuleInput) -> RuleOutcome | None:
        if given.error is None or ";" not in given.sql:
            return None
        try:
            tokens = sqlglot.Dialect.get_or_raise(given.d.sqlglot_name).tokenize(given.sql)
        except BAD_SQL_ERRORS:
            return None
        stray = _stray(tokens)
        if not stray:
            return None
        sql = given.sql
        for at in sorted(stray, reverse=True):
            sql = sql[:at] + sql[at + 1 :]
        detail = f"removed {len(stray)} semicolon(s) inside the statement"
        return RuleOutcome(repairs=[Repair(sql=sql, detail=detail)])


def _stray(tokens: list[Token]) -> list[int]:
    """Text offsets of the semicolons that cannot end a statement."""
    found: list[int] = []
    depth = 0
    for index, token in enumerate(tokens):
        kind = token.token_type
        if kind == TokenType.L_PAREN:
            depth += 1
        elif kind == TokenType.R_PAREN:
            depth = max(depth - 1, 0)
        elif kind == TokenType.SEMICOLON:
            following = tokens[index + 1] if index + 1 < len(tokens) else None
            continues = following is not None and following.token_type in _CONTINUES
            if depth > 0 or continues:
                found.append(token.start)
    return found
