"""A statement's clause skeleton: its SQL with every name and value blanked out.

DAC's skeleton parsing compares the skeleton of the SQL under correction with
the skeleton of a SQL written from the question alone. Here a skeleton is the
statement written by sqlglot with every table, column and literal replaced by
`_`, aliases and join conditions dropped, every join kind written `join`,
lists of blanks (`_, _, _`) folded to one `_`, in lower case with single
spaces: `SELECT u.name, COUNT(*) FROM users AS u LEFT JOIN orders AS o ON
o.uid = u.id WHERE o.total > 10 GROUP BY u.name` becomes `select _, count(*)
from _ join _ where _ > _ group by _`. Pure: no I/O.
"""

from __future__ import annotations

import re

from sqlglot import exp

from acts_sql.sql._rewrite import BAD_SQL_ERRORS
from acts_sql.sql.diagnostics import parse_statements
from acts_sql.sql.dialects import Dialect, get_dialect

BLANK = "_"
_LIST = re.compile(r"_(?:\s*,\s*_)+")
_SPACES = re.compile(r"\s+")
_TOKEN = re.compile(r"\w+|[^\w\s]")


def skeleton(sql: str, dialect: str | Dialect) -> str | None:
    """The skeleton of `sql` (its statements joined by `;`); None when it does not parse."""
    d = get_dialect(dialect)
    try:
        statements = parse_statements(sql, d)
    except BAD_SQL_ERRORS:
        return None
    if not statements:
        return None
    try:
        parts = [d.generate(statement.transform(_blank)) for statement in statements]
    except BAD_SQL_ERRORS:
        return None
    text = _SPACES.sub(" ", " ; ".join(parts).lower()).strip().replace("inner join", "join")
    return _LIST.sub(BLANK, text)


def skeleton_length(text: str) -> int:
    """Tokens of a skeleton (words and punctuation), the length DAC compares."""
    return len(_TOKEN.findall(text))


def _blank(node: exp.Expr) -> exp.Expr:
    if isinstance(node, exp.Column | exp.Table | exp.Literal):
        return exp.Var(this=BLANK)
    if isinstance(node, exp.Alias):
        return node.this
    if isinstance(node, exp.Join):
        for key in ("on", "using", "side"):
            node.set(key, None)
        node.set("kind", "INNER")  # written "inner join", read back as "join"
        return node
    if isinstance(node, exp.TableAlias) and isinstance(node.parent, exp.CTE):
        return exp.TableAlias(this=exp.to_identifier(BLANK))
    return node
