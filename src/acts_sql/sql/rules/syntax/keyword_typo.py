"""A misspelt SQL keyword (`SELEC`, `FORM`, `WERE`, `GROPU BY`, `JION`, `LIMT`): the keyword.

acts-sql's own rule. A misspelt keyword is a bare word to the parser, so the
statement fails with a syntax error, often one word later (`SELECT a FORM t`
reads FORM as an alias of `a` and fails at `t`). Working on the dialect's
tokens, a bare word becomes the one keyword within Damerau-Levenshtein
distance 1 (2 for words of six letters or more) of it, when exactly one
keyword of the clause keywords below is that close, and only when the
repaired text parses; the chain keeps it only when it also runs. Words of
three letters or fewer are repaired only where the database's error points.

Never touched: words that are a table or column of the schema, aliases (a
word after AS, or a word written more than once, as an alias that is used
is), names defined before AS (a CTE's), qualifiers and qualified names (`x.`
/ `.x`), function names (a word before `(`), quoted names, strings and
comments, and words that are already keywords. The rest of the text is kept
as written; the keyword takes the case of the word it replaces. Applies only
to a statement that fails with a syntax error.
"""

from __future__ import annotations

from sqlglot.tokens import Token, TokenType

from acts_sql.sql._rewrite import parses
from acts_sql.sql.rules._tokens import (
    WORDS,
    failed_tokens,
    failure_index,
    known_names,
    replaced,
)
from acts_sql.sql.rules.base import Repair, Rule, RuleInput, RuleOutcome, Stage

KEYWORDS = (
    "SELECT", "FROM", "WHERE", "GROUP", "ORDER", "HAVING", "JOIN", "LIMIT", "OFFSET", "INNER",
    "LEFT", "RIGHT", "OUTER", "CROSS", "UNION", "DISTINCT", "BETWEEN", "LIKE", "EXISTS", "WITH",
    "CASE", "WHEN", "THEN", "ELSE", "NULL", "DESC", "USING",
)  # fmt: skip
"""The clause keywords a typo is repaired to (none of two letters: `id` is not `IN`)."""

SHORT = 3
"""Words this long or shorter are repaired only where the error points."""


def distance(a: str, b: str) -> int:
    """Damerau-Levenshtein distance (optimal string alignment) of `a` and `b`."""
    rows = [list(range(len(b) + 1))]
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            row[j] = min(rows[-1][j] + 1, row[j - 1] + 1, rows[-1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], rows[-2][j - 2] + 1)
        rows.append(row)
    return rows[-1][-1]


def nearest_keyword(word: str) -> str | None:
    """The one keyword close enough to `word` (None when none or several are)."""
    up = word.upper()
    if up in KEYWORDS or not word.isalpha():
        return None
    limit = 2 if len(word) >= 6 else 1
    close = [k for k in KEYWORDS if distance(up, k) <= limit]
    return close[0] if len(close) == 1 else None


class KeywordTypo(Rule):
    """A misspelt keyword (SELEC, FORM, WERE, GROPU BY, JION, LIMT) that breaks the syntax."""

    name = "keyword_typo"
    stage = Stage.SYNTAX
    lexical = True

    def check(self, given: RuleInput) -> RuleOutcome | None:
        tokens = failed_tokens(given.sql, given.error, given.d)
        if tokens is None:
            return None
        fail = failure_index(tokens, given.error or "")
        typos = _typos(tokens, known_names(given.facts), fail)
        if not typos:
            return None
        ordered = sorted(typos, key=lambda t: _nearness(t[0], fail))
        tries = [ordered] + [[typo] for typo in ordered] if len(ordered) > 1 else [ordered]
        repairs = []
        for chosen in tries:
            sql = _apply(given.sql, tokens, chosen)
            if parses(sql, given.d):
                words = ", ".join(f"{tokens[i].text} -> {kw}" for i, kw in chosen)
                repairs.append(Repair(sql=sql, detail=f"keyword typo: {words}"))
        return RuleOutcome(repairs=repairs) if repairs else None


def _typos(tokens: list[Token], schema: set[str], fail: int | None) -> list[tuple[int, str]]:
    """(token index, keyword) of each bare word that is a keyword typo (see the module doc)."""
    counts: dict[str, int] = {}
    for token in tokens:
        counts[token.text.lower()] = counts.get(token.text.lower(), 0) + 1
    found = []
    for index, token in enumerate(tokens):
        word = token.text
        if token.token_type not in WORDS or word.lower() in schema or counts[word.lower()] > 1:
            continue
        if len(word) <= SHORT and index != fail:
            continue
        if _beside(tokens, index) or (keyword := nearest_keyword(word)) is None:
            continue
        found.append((index, _cased(keyword, word)))
    return found


def _beside(tokens: list[Token], index: int) -> bool:
    """Whether the word is an alias after AS, a name defined before AS (a CTE), a qualifier,
    a qualified name or a function."""
    before = tokens[index - 1].token_type if index > 0 else None
    after = tokens[index + 1].token_type if index + 1 < len(tokens) else None
    names = (TokenType.DOT, TokenType.L_PAREN, TokenType.ALIAS)
    return before in (TokenType.ALIAS, TokenType.DOT) or after in names


def _nearness(index: int, fail: int | None) -> tuple[int, int]:
    """Sort key: the failing word, then the word before it, then the rest by distance."""
    if fail is None:
        return (0, index)
    gap = fail - index
    return (0 if gap in (0, 1) else 1, abs(gap))


def _cased(keyword: str, word: str) -> str:
    if word.islower():
        return keyword.lower()
    if word.isupper():
        return keyword
    return keyword.capitalize()


def _apply(sql: str, tokens: list[Token], chosen: list[tuple[int, str]]) -> str:
    for index, keyword in sorted(chosen, reverse=True):
        sql = replaced(sql, tokens[index], keyword)
    return sql
