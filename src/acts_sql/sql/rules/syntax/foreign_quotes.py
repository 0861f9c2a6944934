"""Names in another dialect's identifier quotes (`` `name` `` or `[name]` on PostgreSQL): requoted.

acts-sql's own rule. MySQL's backticks and SQL Server's brackets are syntax
errors on PostgreSQL, Oracle and DuckDB (and brackets on MySQL); transpiling
the whole statement from MySQL would also reread the rest of it (`||` is OR
there), so only the quotes change: each foreign-quoted name outside strings
and comments is written with the engine's own quotes. A bracket counts as a
quote only where a name can start (after a space, a comma, a parenthesis or a
dot) and around a plain name, so `arr[1]` stays an array subscript. Applies
only to a statement that fails.
"""

from __future__ import annotations

import re

from acts_sql.sql._scan import scan
from acts_sql.sql.dialects import Dialect
from acts_sql.sql.rules.base import Repair, Rule, RuleInput, RuleOutcome, Stage

_BACKTICKED = re.compile(r"`([^`]+)`")
_BRACKETED = re.compile(r"(?:(?<=^)|(?<=[\s,(.]))\[([A-Za-z_][^\[\]]*)\]")


class ForeignQuotes(Rule):
    """Identifiers in backticks or brackets where the engine uses other quotes."""

    name = "foreign_quotes"
    stage = Stage.SYNTAX
    lexical = True

    def check(self, given: RuleInput) -> RuleOutcome | None:
        d = given.d
        patterns = _foreign(d)
        if given.error is None or not patterns:
            return None
        fixed = _requoted(given.sql, d, patterns)
        if fixed == given.sql:
            return None
        return RuleOutcome(repairs=[Repair(sql=fixed, detail=f"names requoted for {d.name}")])


def _foreign(d: Dialect) -> list[re.Pattern[str]]:
    own = {open_quote for open_quote, _ in d.identifier_quotes}
    found = []
    if "`" not in own:
        found.append(_BACKTICKED)
    if "[" not in own:
        found.append(_BRACKETED)
    return found


def _requoted(sql: str, d: Dialect, patterns: list[re.Pattern[str]]) -> str:
    parts = []
    for span in scan(sql, d):
        text = sql[span.start : span.end]
        if span.kind == "code":
            for pattern in patterns:
                text = pattern.sub(lambda m: _quoted(m.group(1), d), text)
        parts.append(text)
    return "".join(parts)


def _quoted(name: str, d: Dialect) -> str:
    open_quote, close_quote = d.identifier_quotes[0]
    return open_quote + name.replace(close_quote, close_quote * 2) + close_quote
