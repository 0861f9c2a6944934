"""A comma missing between two select items (`SELECT plate COUNT(*) FROM ...`): inserted.

acts-sql's own rule. Without its comma, `SELECT plate COUNT(*)` is a column
followed by a function call, which no engine parses; `SELECT a b c` reads b
as a's alias and fails at c. Working on the dialect's tokens, in the select
list of each SELECT (up to its FROM, at the list's own parenthesis depth), a
comma goes between two adjacent tokens when the left one ends an item (a
schema column, alone or qualified; a closing parenthesis; CASE's END; a
literal; an alias written after AS) and the right one starts an item (a
schema column, alone or qualifying one of its own, or a function call: a word
before `(`, or CASE). The first repair has every such comma, the next ones
each comma alone; each must parse, and the chain keeps one only when it runs.

Never touched: a word that is not a schema column on either side (`SELECT
price total FROM t`: total is an alias there, not a missing item), anything
inside parentheses or outside select lists, and statements that fail with
any other error than a syntax error. The text is otherwise kept as written.
"""

from __future__ import annotations

from sqlglot.tokens import Token, TokenType

from acts_sql.sql._rewrite import parses
from acts_sql.sql.rules._tokens import failed_tokens, insert_commas, is_column, select_list_pairs
from acts_sql.sql.rules.base import Repair, Rule, RuleInput, RuleOutcome, Stage

_ENDS_ITEM = {TokenType.R_PAREN, TokenType.END, TokenType.NUMBER, TokenType.STRING}
_NAMES = (TokenType.VAR, TokenType.IDENTIFIER)


class MissingComma(Rule):
    """Two select items without a comma between them: the comma inserted."""

    name = "missing_comma"
    stage = Stage.SYNTAX
    lexical = True

    def check(self, given: RuleInput) -> RuleOutcome | None:
        tokens = failed_tokens(given.sql, given.error, given.d)
        if tokens is None:
            return None
        columns = {c.name.lower() for t in given.facts.tables for c in t.columns}
        gaps = [i for i in select_list_pairs(tokens) if _gap(tokens, i, columns)]
        if not gaps:
            return None
        tries = [gaps] + [[gap] for gap in gaps] if len(gaps) > 1 else [gaps]
        repairs = []
        for chosen in tries:
            sql = insert_commas(given.sql, tokens, chosen)
            if parses(sql, given.d):
                after = ", ".join(tokens[i].text for i in chosen)
                repairs.append(Repair(sql=sql, detail=f"comma inserted after {after}"))
        return RuleOutcome(repairs=repairs) if repairs else None


def _gap(tokens: list[Token], i: int, columns: set[str]) -> bool:
    """Whether a comma belongs between tokens i and i+1 (see the module doc)."""
    return _ends_item(tokens, i, columns) and _starts_item(tokens, i + 1, columns)


def _ends_item(tokens: list[Token], i: int, columns: set[str]) -> bool:
    kind = tokens[i].token_type
    if kind in _ENDS_ITEM:
        return True
    if kind not in _NAMES:
        return False
    before = tokens[i - 1].token_type if i > 0 else None
    return before == TokenType.ALIAS or is_column(tokens, i, columns)


def _starts_item(tokens: list[Token], i: int, columns: set[str]) -> bool:
    token = tokens[i]
    after = tokens[i + 1] if i + 1 < len(tokens) else None
    if token.token_type == TokenType.CASE:
        return True
    if token.token_type not in _NAMES:
        return False
    if after is not None and after.token_type == TokenType.L_PAREN:
        return token.token_type == TokenType.VAR
    if after is not None and after.token_type == TokenType.DOT and i + 2 < len(tokens):
        return is_column(tokens, i + 2, columns)
    return is_column(tokens, i, columns)
