"""A WITH clause opened again for each common table expression.

A model that writes its answer in steps often gives each step's CTE a WITH of its own
(`WITH a AS (...)`, then on the next lines `WITH b AS (...)`, then the query), and the
database stops at the second WITH. This rule joins them into one clause: each WITH that
follows a CTE's closing parenthesis, outside parentheses, in a statement that began with
WITH, becomes a comma; when a later one said RECURSIVE, the first WITH says it (a WITH
RECURSIVE clause may also define CTEs that are not). The repair is kept only when it
parses strictly in the dialect: a WITH after a whole query is a new statement
(`missing_semicolon`). Comments stay where they were. Applies only to a statement that fails
with a syntax error.
"""

from __future__ import annotations

from sqlglot.tokens import Token, TokenType

from acts_sql.sql._rewrite import parses
from acts_sql.sql.rules._tokens import failed_tokens
from acts_sql.sql.rules.base import Repair, Rule, RuleInput, RuleOutcome, Stage


class RepeatedWith(Rule):
    """`WITH a AS (...) WITH b AS (...) SELECT ...`: one WITH, the CTEs separated by commas."""

    name = "repeated_with"
    stage = Stage.SYNTAX

    def check(self, given: RuleInput) -> RuleOutcome | None:
        tokens = failed_tokens(given.sql, given.error, given.d)
        if tokens is None or tokens[0].token_type != TokenType.WITH:
            return None
        again = _repeated(tokens)
        if not again:
            return None
        sql = given.sql
        recursive = False
        for index in sorted(again, reverse=True):
            start, end = tokens[index].start, tokens[index].end + 1
            after = tokens[index + 1] if index + 1 < len(tokens) else None
            if after is not None and after.token_type == TokenType.RECURSIVE:
                recursive, end = True, after.end + 1
            sql = f"{sql[:start]},{sql[end:]}"
        if recursive and tokens[1].token_type != TokenType.RECURSIVE:
            first = tokens[0]
            sql = f"{sql[: first.end + 1]} RECURSIVE{sql[first.end + 1 :]}"
        if not parses(sql, given.d):
            return None
        detail = f"joined {len(again) + 1} WITH clauses into one"
        return RuleOutcome(repairs=[Repair(sql=sql, detail=detail)])


def _repeated(tokens: list[Token]) -> list[int]:
    """Indexes of the WITH tokens, outside parentheses and before the first semicolon, that
    follow a closing parenthesis (the end of a CTE's body)."""
    found: list[int] = []
    depth = 0
    for index, token in enumerate(tokens):
        kind = token.token_type
        if kind == TokenType.SEMICOLON:
            break
        if kind == TokenType.L_PAREN:
            depth += 1
        elif kind == TokenType.R_PAREN:
            depth = max(depth - 1, 0)
        elif kind == TokenType.WITH and depth == 0 and index > 0:
            found += [index] if tokens[index - 1].token_type == TokenType.R_PAREN else []
    return found
