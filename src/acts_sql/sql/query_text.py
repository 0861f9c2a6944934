"""Statements and canonical text of a query in any language: a query language plugin's own
(PRQL, ...) when the dialect names one, sqlglot's for SQL (`diagnostics`, `normalize`)."""

from __future__ import annotations

from acts_sql.sql.diagnostics import split_sql
from acts_sql.sql.dialects import Dialect
from acts_sql.sql.languages.registry import plugin_for
from acts_sql.sql.normalize import canonical_sql


def split_statements(text: str, dialect: str | Dialect) -> list[str]:
    """The statements of `text` without separators and empty statements: the plugin's own
    `statements` for a query language (one query per text), `split_sql` for SQL."""
    language = plugin_for(dialect)
    if language is not None:
        return language.statements(text)
    return split_sql(text, dialect)


def normalize_sql(text: str, dialect: str | Dialect) -> str:
    """The text by which two queries count as the same one (statements joined by "; "):
    the plugin's `canonical` form for a query language, `canonical_sql` for SQL."""
    language = plugin_for(dialect)
    if language is not None:
        return language.canonical(text)
    return canonical_sql(text, dialect)
