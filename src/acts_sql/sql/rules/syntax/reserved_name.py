"""A table or column whose name the engine reserves, written bare (`FROM transaction`): quoted.

acts-sql's own rule. Schemas have tables and columns named `transaction`, `order`, `group`
or `values`; written without quotes, the engine reads the word as its keyword and the
statement fails with a syntax error at that word (SQLite: `near "transaction": syntax
error`; PostgreSQL and DuckDB: `syntax error at or near "..."`; MySQL: `... near
'transaction ...'`). When the word the error points at is a table or column of the schema
(its name, case aside), every bare occurrence of that word becomes the schema's name in the
dialect's identifier quotes; quoted names, strings, comments and multi-word keywords
(`ORDER BY`, `GROUP BY`) are tokens of their own and stay. The rest of the text is kept as
written. Applies only to a statement that fails with a syntax error.
"""

from __future__ import annotations

from sqlglot.tokens import TokenType

from acts_sql.sql.rules._tokens import failed_tokens, near_word
from acts_sql.sql.rules.base import Repair, Rule, RuleInput, RuleOutcome, Stage
from acts_sql.sql.schema_facts import SchemaFacts

_LEFT_ALONE = (TokenType.IDENTIFIER, TokenType.STRING)
"""Tokens that are never the bare word: quoted names and strings."""


class ReservedName(Rule):
    """A schema name the engine reads as its keyword: quoted."""

    name = "reserved_name"
    stage = Stage.SYNTAX

    def check(self, given: RuleInput) -> RuleOutcome | None:
        tokens = failed_tokens(given.sql, given.error, given.d)
        if tokens is None or given.error is None:
            return None
        word = near_word(given.error).lower()
        bare = [t for t in tokens if t.text.lower() == word and t.token_type not in _LEFT_ALONE]
        name = _schema_name(given.facts, word) if bare else None
        if name is None:
            return None
        quoted = given.d.quote_identifier(name)
        sql = given.sql
        for token in sorted(bare, key=lambda t: t.start, reverse=True):
            sql = sql[: token.start] + quoted + sql[token.end + 1 :]
        return RuleOutcome(
            repairs=[Repair(sql=sql, detail=f"quoted {name}, a name the engine reserves")]
        )


def _schema_name(facts: SchemaFacts, word: str) -> str | None:
    """The schema's own spelling of the table or column `word` names (tables first)."""
    for table in facts.tables:
        if table.name.rsplit(".", 1)[-1].lower() == word:
            return table.name.rsplit(".", 1)[-1]
    for table in facts.tables:
        for column in table.columns:
            if column.name.lower() == word:
                return column.name
    return None
