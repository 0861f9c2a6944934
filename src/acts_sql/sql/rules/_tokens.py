"""Token-level reading for the rules that repair text sqlglot cannot parse.

A misspelt keyword or a missing comma leaves a statement that no parser
reads, so those rules work on the dialect's tokens and edit the text at token
offsets, keeping everything else as written. Here: tokenizing without
raising, whether a database error is a syntax error, the word it names, and
which names a statement may legitimately use (the schema's, its aliases).
"""

from __future__ import annotations

import re

import sqlglot
from sqlglot.tokens import Token, TokenType

from acts_sql.sql._rewrite import BAD_SQL_ERRORS
from acts_sql.sql.dialects import Dialect
from acts_sql.sql.schema_facts import SchemaFacts

_SYNTAX = re.compile(
    r"syntax error|parser error|error in your sql syntax|incomplete input", re.IGNORECASE
)
_NEAR = re.compile(r"near \"(?P<a>[^\"]*)\"|near '(?P<b>[^'\s]*)", re.IGNORECASE)

SELECT_LIST_ENDS = {
    TokenType.FROM,
    TokenType.WHERE,
    TokenType.GROUP_BY,
    TokenType.ORDER_BY,
    TokenType.HAVING,
    TokenType.LIMIT,
    TokenType.UNION,
    TokenType.INTERSECT,
    TokenType.EXCEPT,
    TokenType.SEMICOLON,
    TokenType.INTO,
}
"""Tokens that end a select list at its own depth."""

WORDS = (TokenType.VAR,)
"""Tokens that are bare words the dialect does not reserve (a keyword typo is one)."""


def tokens_of(sql: str, d: Dialect) -> list[Token] | None:
    """The dialect's tokens of `sql` (None when it cannot be tokenized)."""
    try:
        return list(sqlglot.Dialect.get_or_raise(d.sqlglot_name).tokenize(sql))
    except BAD_SQL_ERRORS:
        return None


def failed_tokens(sql: str, error: str | None, d: Dialect) -> list[Token] | None:
    """The tokens of `sql` when the database's `error` is a syntax error (None when it is not,
    or when `sql` cannot be tokenized or has no token): what a token-level repair reads."""
    return (tokens_of(sql, d) or None) if is_syntax_error(error) else None


def is_syntax_error(error: str | None) -> bool:
    """Whether the database's error says the statement does not parse (any engine)."""
    return bool(error and _SYNTAX.search(error))


def near_word(error: str) -> str:
    """The word a syntax error points at (`near "X"`, `near 'X ...'`), or ""."""
    found = _NEAR.search(error)
    return (found.group("a") or found.group("b") or "") if found else ""


def failure_index(tokens: list[Token], error: str) -> int | None:
    """The index of the token the error names (`near "X"`), when one token has that text."""
    word = near_word(error)
    if not word:
        return None
    low = word.lower()
    at = [i for i, t in enumerate(tokens) if t.text.lower() == low]
    return at[0] if at else None


def known_names(facts: SchemaFacts) -> set[str]:
    """Every table and column name of the schema, lower case."""
    names = {t.name.lower().rsplit(".", 1)[-1] for t in facts.tables}
    return names | {c.name.lower() for t in facts.tables for c in t.columns}


def is_column(tokens: list[Token], index: int, columns: set[str]) -> bool:
    """Whether the word at `index` (alone, or the last part of `q.word`) is a schema column."""
    token = tokens[index]
    if token.token_type not in (TokenType.VAR, TokenType.IDENTIFIER):
        return False
    return token.text.lower() in columns


def replaced(sql: str, token: Token, text: str) -> str:
    """`sql` with `token`'s text replaced by `text`."""
    return sql[: token.start] + text + sql[token.end + 1 :]


def select_list_pairs(tokens: list[Token]) -> list[int]:
    """Indexes i such that tokens i and i+1 are adjacent in a select list, at its depth."""
    pairs: list[int] = []
    depth = 0
    open_lists: list[int] = []  # depths of the select lists being read
    for i, token in enumerate(tokens):
        kind = token.token_type
        if kind == TokenType.L_PAREN:
            depth += 1
        elif kind == TokenType.R_PAREN:
            depth -= 1
            while open_lists and open_lists[-1] > depth:
                open_lists.pop()
        if kind == TokenType.SELECT:
            open_lists.append(depth)
            continue
        if open_lists and open_lists[-1] == depth and kind in SELECT_LIST_ENDS:
            open_lists.pop()
            continue
        following = tokens[i + 1] if i + 1 < len(tokens) else None
        if open_lists and open_lists[-1] == depth and following is not None:
            pairs.append(i)
    return pairs


def insert_commas(sql: str, tokens: list[Token], chosen: list[int]) -> str:
    """`sql` with a comma after each token of `chosen` (indexes into `tokens`)."""
    for i in sorted(chosen, reverse=True):
        at = tokens[i].end + 1
        sql = sql[:at] + "," + sql[at:]
    return sql
