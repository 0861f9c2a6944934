"""SQL dialects: one declarative class per dialect, all in one registry.

Each supported dialect is a subclass of `Dialect` that only overrides field
defaults; defining the subclass registers its one instance. Everything that
differs between dialects (names, quoting, lexical rules, and later timeouts,
row limits, sampling and reflection) is a field here, so the rest of the code
asks the dialect instead of branching on its name.

    >>> get_dialect("PostgreSQL").quote_identifier("user")
    '"user"'
    >>> get_dialect("mssql").quote_identifier("order details")
    '[order details]'
    >>> get_dialect("sqlite").quote_identifier("order details")  # never a string
    '`order details`'
"""

from __future__ import annotations

from functools import cache
from typing import Any

import sqlglot
from pydantic import BaseModel, ConfigDict
from sqlglot import exp

from acts_sql.errors import ConfigError

_REGISTRY: dict[str, Dialect] = {}
"""Canonical name -> dialect, in definition order."""

_LOOKUP: dict[str, Dialect] = {}
"""Lookup key (canonical name or alias, see `_key`) -> dialect."""


def _key(name: str) -> str:
    """Lookup key: case, spaces, '-' and '_' do not matter ("SQL Server" == "sqlserver")."""
    return "".join(ch for ch in name.strip().lower() if ch not in " -_")


class Dialect(BaseModel):
    """What acts-sql knows about one SQL dialect.

    Subclass it and override field defaults to declare a dialect; the subclass
    registers itself. Instances are frozen and compare by value.
    """

    model_config = ConfigDict(frozen=True)

    name: str
    """Canonical acts-sql name (lower case), e.g. "postgresql"."""
    sqlglot_name: str
    """sqlglot's name for the dialect, e.g. "postgres"."""
    display_name: str
    """Human-readable name, e.g. "PostgreSQL"."""
    aliases: tuple[str, ...] = ()
    """Other names `get_dialect` accepts (case, spaces, '-' and '_' ignored)."""

    strict_identifier_quotes: tuple[str, str] | None = None
    """(open, close) quotes for identifiers acts-sql writes itself (templates,
    `quote_identifier`) when the usual ones are ambiguous: SQLite reads "x" as
    the string 'x' when no column x exists, so a template over a misspelt
    column would quietly count a constant. None: the dialect's usual quotes."""

    # Lexical rules, used by the quote-aware scanner when sqlglot cannot
    # tokenize a statement (an unterminated string, say).
    string_quotes: tuple[str, ...] = ("'",)
    """Characters that open (and close) a string literal."""
    identifier_quotes: tuple[tuple[str, str], ...] = (('"', '"'),)
    """(open, close) pairs of quoted identifiers."""
    line_comments: tuple[str, ...] = ("--",)
    """Markers that start a comment running to the end of the line."""
    backslash_escapes: bool = False
    """Whether a backslash escapes the next character inside string literals."""
    dollar_quoting: bool = False
    """Whether $tag$ ... $tag$ strings exist (PostgreSQL, DuckDB)."""

    # Statement splitting around procedural code.
    routine_body_runs_to_end: bool = False
    """A CREATE PROCEDURE/FUNCTION/TRIGGER whose body (after AS) is not a
    BEGIN ... END block takes the rest of the text (a T-SQL batch)."""
    declarations_before_begin: bool = False
    """A routine header or DECLARE opens a block whose `;`-terminated declarations
    precede its BEGIN ... END (PL/SQL)."""

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        _register(cls())  # type: ignore[call-arg]  # subclasses give every field a default

    @property
    def sqlglot_dialect(self) -> sqlglot.Dialect:
        """The sqlglot dialect instance (cached)."""
        return _sqlglot_dialect(self.sqlglot_name)

    def quote_identifier(self, name: str) -> str:
        """`name` as one quoted identifier of this dialect (embedded quotes escaped).

        The name is taken literally: a dot is part of the name, not a separator.
        Uses `strict_identifier_quotes` where the dialect declares them.
        """
        return self.generate(exp.to_identifier(name, quoted=True), strict_identifiers=True)

    def generate(
        self, expression: exp.Expr, *, strict_identifiers: bool = False, **opts: Any
    ) -> str:
        """SQL text of a sqlglot expression in this dialect.

        `strict_identifiers`: quote identifiers with `strict_identifier_quotes`
        (for SQL that acts-sql writes, not for the user's own SQL). `opts` are
        sqlglot generator options.
        """
        generator = self.sqlglot_dialect.generator(**opts)
        if strict_identifiers and self.strict_identifier_quotes is not None:
            start, end = self.strict_identifier_quotes
            # sqlglot takes identifier quotes from the dialect; these generator
            # fields are where it keeps them (sqlglot 30).
            generator._identifier_start = start
            generator._identifier_end = end
            generator._escaped_identifier_end = end * 2
        return generator.generate(expression, copy=True)

    def __str__(self) -> str:
        return self.name


@cache
def _sqlglot_dialect(name: str) -> sqlglot.Dialect:
    return sqlglot.Dialect.get_or_raise(name)


def _register(dialect: Dialect) -> None:
    if dialect.name != dialect.name.lower() or dialect.name in _REGISTRY:
        raise ValueError(f"dialect name {dialect.name!r} must be lower case and unique")
    _sqlglot_dialect(dialect.sqlglot_name)  # fails early on a name sqlglot does not know
    keys = {_key(dialect.name), *(_key(alias) for alias in dialect.aliases)}
    for key in keys:
        other = _LOOKUP.get(key)
        if other is not None and other.name != dialect.name:
            raise ValueError(
                f"dialect alias {key!r} of {dialect.name!r} is taken by {other.name!r}"
            )
    _REGISTRY[dialect.name] = dialect
    for key in keys:
        _LOOKUP[key] = dialect


# ---------------------------------------------------------------- the dialects


class SQLite(Dialect):
    name: str = "sqlite"
    sqlglot_name: str = "sqlite"
    display_name: str = "SQLite"
    aliases: tuple[str, ...] = ("sqlite3",)
    identifier_quotes: tuple[tuple[str, str], ...] = (('"', '"'), ("`", "`"), ("[", "]"))
    strict_identifier_quotes: tuple[str, str] | None = ("`", "`")


class PostgreSQL(Dialect):
    name: str = "postgresql"
    sqlglot_name: str = "postgres"
    display_name: str = "PostgreSQL"
    aliases: tuple[str, ...] = ("postgres", "pg", "pgsql", "psql")
    dollar_quoting: bool = True


class MySQL(Dialect):
    name: str = "mysql"
    sqlglot_name: str = "mysql"
    display_name: str = "MySQL"
    aliases: tuple[str, ...] = ("mariadb",)
    string_quotes: tuple[str, ...] = ("'", '"')
    identifier_quotes: tuple[tuple[str, str], ...] = (("`", "`"),)
    line_comments: tuple[str, ...] = ("--", "#")
    backslash_escapes: bool = True


class SQLServer(Dialect):
    name: str = "sqlserver"
    sqlglot_name: str = "tsql"
    display_name: str = "SQL Server"
    aliases: tuple[str, ...] = ("mssql", "tsql", "t-sql", "azuresql")
    identifier_quotes: tuple[tuple[str, str], ...] = (('"', '"'), ("[", "]"))
    routine_body_runs_to_end: bool = True


class Oracle(Dialect):
    name: str = "oracle"
    sqlglot_name: str = "oracle"
    display_name: str = "Oracle"
    aliases: tuple[str, ...] = ("oracledb", "plsql")
    declarations_before_begin: bool = True


class DuckDB(Dialect):
    name: str = "duckdb"
    sqlglot_name: str = "duckdb"
    display_name: str = "DuckDB"
    aliases: tuple[str, ...] = ("duck",)
    dollar_quoting: bool = True


# ------------------------------------------------------------------ lookup


def dialect_names() -> list[str]:
    """Canonical names of all registered dialects, in definition order."""
    return list(_REGISTRY)


def all_dialects() -> list[Dialect]:
    """All registered dialects, in definition order."""
    return list(_REGISTRY.values())


def get_dialect(name: str | Dialect) -> Dialect:
    """The dialect called `name` (canonical name or alias, case-insensitive).

    A `Dialect` is returned as is. Raises `ConfigError` naming the known
    dialects when `name` is unknown.
    """
    if isinstance(name, Dialect):
        return name
    dialect = _LOOKUP.get(_key(name)) if isinstance(name, str) else None
    if dialect is None:
        known = dialect_names()
        raise ConfigError(
            f"unknown dialect {name!r}; known dialects: {', '.join(known)}",
            dialect=name,
            known=known,
        )
    return dialect
