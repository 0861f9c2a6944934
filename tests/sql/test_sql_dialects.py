"""Dialect registry: lookup by name and alias, the error for unknown names, quoting."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from acts_sql.errors import ConfigError
from acts_sql.sql.dialects import Dialect, all_dialects, dialect_names, get_dialect

CANONICAL = ["sqlite", "postgresql", "mysql", "sqlserver", "oracle", "duckdb"]


def test_dialect_names_are_the_canonical_six_in_order() -> None:
    assert dialect_names() == CANONICAL
    assert [d.name for d in all_dialects()] == CANONICAL


@pytest.mark.parametrize(
    ("spelling", "name", "sqlglot_name"),
    [
        ("sqlite", "sqlite", "sqlite"),
        ("SQLite", "sqlite", "sqlite"),
        ("sqlite3", "sqlite", "sqlite"),
        ("PostgreSQL", "postgresql", "postgres"),
        ("postgres", "postgresql", "postgres"),
        ("pg", "postgresql", "postgres"),
        ("MySQL", "mysql", "mysql"),
        ("mariadb", "mysql", "mysql"),
        ("SQLServer", "sqlserver", "tsql"),  # as BIRD-CRITIC spells it
        ("SQL Server", "sqlserver", "tsql"),
        ("sql_server", "sqlserver", "tsql"),
        ("mssql", "sqlserver", "tsql"),
        ("T-SQL", "sqlserver", "tsql"),
        ("Oracle", "oracle", "oracle"),
        (" duckdb ", "duckdb", "duckdb"),
    ],
)
def test_lookup_by_name_or_alias(spelling: str, name: str, sqlglot_name: str) -> None:
    dialect = get_dialect(spelling)
    assert dialect.name == name
    assert dialect.sqlglot_name == sqlglot_name


def test_a_dialect_is_returned_as_is() -> None:
    dialect = get_dialect("pg")
    assert get_dialect(dialect) is dialect


@pytest.mark.parametrize("bad", ["postgre", "sqlite4", "", "oracle12"])
def test_unknown_dialect_raises_config_error_listing_known_names(bad: str) -> None:
    with pytest.raises(ConfigError) as caught:
        get_dialect(bad)
    for name in CANONICAL:
        assert name in caught.value.message
    assert caught.value.details["known"] == CANONICAL
    assert caught.value.details["dialect"] == bad


@pytest.mark.parametrize(
    ("dialect", "name", "quoted"),
    [
        ("sqlite", "order details", "`order details`"),  # "x" may read as a string in SQLite
        ("sqlite", "a`b", "`a``b`"),
        ("postgresql", 'say "hi"', '"say ""hi"""'),
        ("mysql", "a`b", "`a``b`"),
        ("sqlserver", "a]b", "[a]]b]"),
        ("oracle", "Name", '"Name"'),
        ("duckdb", "s.t", '"s.t"'),  # a dot is part of the name, not a separator
    ],
)
def test_quote_identifier(dialect: str, name: str, quoted: str) -> None:
    assert get_dialect(dialect).quote_identifier(name) == quoted


def test_dialects_are_frozen() -> None:
    with pytest.raises(ValidationError):
        get_dialect("sqlite").name = "other"  # type: ignore[misc]


def test_declaring_a_dialect_with_a_taken_alias_fails_and_registers_nothing() -> None:
    with pytest.raises(ValueError, match="taken"):

        class Clash(Dialect):
            name: str = "clash"
            sqlglot_name: str = "postgres"
            display_name: str = "Clash"
            aliases: tuple[str, ...] = ("pg",)

    assert "clash" not in dialect_names()
    assert get_dialect("pg").name == "postgresql"


def test_per_dialect_lexical_facts() -> None:
    assert get_dialect("mysql").backslash_escapes
    assert "#" in get_dialect("mysql").line_comments
    assert get_dialect("postgresql").dollar_quoting
    assert not get_dialect("sqlite").dollar_quoting
    assert ("[", "]") in get_dialect("sqlserver").identifier_quotes
