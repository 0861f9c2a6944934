"""Rules over the raw text, for what a parser drops before rules see a tree."""

from __future__ import annotations

from collections.abc import Callable

from acts_sql.sql._scan import scan
from acts_sql.sql.dialects import Dialect
from acts_sql.sql.safety_rules.findings import Finding
from acts_sql.sql.safety_rules.tables import EXECUTABLE_COMMENT, EXECUTABLE_COMMENT_DIALECTS

TextRule = Callable[[str, Dialect], list[Finding]]


def executable_comment(sql: str, dialect: Dialect) -> list[Finding]:
    """MySQL and MariaDB run the text of `/*! ... */` and `/*M! ... */`
    comments, which sqlglot (rightly, for other engines) discards."""
    if dialect.name not in EXECUTABLE_COMMENT_DIALECTS:
        return []
    for span in scan(sql, dialect):
        if span.kind == "comment" and EXECUTABLE_COMMENT.match(sql[span.start : span.end]):
            return [Finding("hidden", "MySQL executable comment /*! ... */")]
    return []


TEXT_RULES: tuple[TextRule, ...] = (executable_comment,)
"""Every text rule; they run before parsing."""
