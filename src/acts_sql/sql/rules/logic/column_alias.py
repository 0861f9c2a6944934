"""A schema column written where an alias goes: the missing comma inserted.

acts-sql's own rule, the twin of `missing_comma` for a statement that runs.
`SELECT title pages FROM books` parses: `pages` becomes the alias of `title`,
and the query returns one column where two were meant. Working on the
dialect's tokens, in each select list (at its own depth), a comma goes
between two adjacent words when both are schema columns (the left one alone
or qualified), the right one has no AS before it, and it ends its item (a
comma, the end of the list, or the end of the text follows). The repair must
parse; the chain keeps it only when it runs (a word that is a column of no
table the query reads makes it fail). Left alone: an alias after AS, and an
alias that is not a schema column (`SELECT price total`).
"""

from __future__ import annotations

from sqlglot.tokens import Token, TokenType

from acts_sql.sql._rewrite import parses
from acts_sql.sql.rules._tokens import (
    SELECT_LIST_ENDS,
    insert_commas,
    is_column,
    select_list_pairs,
    tokens_of,
)
from acts_sql.sql.rules.base import Repair, Rule, RuleInput, RuleOutcome, Stage


class ColumnAlias(Rule):
    """A schema column that a missing comma turned into an alias: the comma inserted."""

    name = "column_alias"
    stage = Stage.LOGIC

    def check(self, given: RuleInput) -> RuleOutcome | None:
        if given.error is not None:
            return None
        tokens = tokens_of(given.sql, given.d)
        if not tokens:
            return None
        columns = {c.name.lower() for t in given.facts.tables for c in t.columns}
        gaps = [i for i in select_list_pairs(tokens) if _alias_is_column(tokens, i, columns)]
        if not gaps:
            return None
        sql = insert_commas(given.sql, tokens, gaps)
        if not parses(sql, given.d):
            return None
        after = ", ".join(tokens[i].text for i in gaps)
        return RuleOutcome(repairs=[Repair(sql=sql, detail=f"comma inserted after {after}")])


def _alias_is_column(tokens: list[Token], i: int, columns: set[str]) -> bool:
    """Whether token i+1 is a schema column written as token i's alias."""
    if not (is_column(tokens, i, columns) and is_column(tokens, i + 1, columns)):
        return False
    if tokens[i].text.lower() == tokens[i + 1].text.lower():
        return False
    after = tokens[i + 2] if i + 2 < len(tokens) else None
    return (
        after is None or after.token_type == TokenType.COMMA or after.token_type in SELECT_LIST_ENDS
    )
