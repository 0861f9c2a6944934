"""SQL dialects: one declarative class per dialect, all in one registry.

Each supported dialect is a subclass of `Dialect` that only overrides field
defaults; defining the subclass registers its one instance. Everything that
differs between dialects (names, quoting, lexical rules, URL schemes and
ports, statement timeouts, read-only transactions, syntax probes and
reflection queries) is a field here, so the rest of the code asks the dialect
instead of branching on its name. The fields are data only: this module does
no I/O; the executors in `acts_sql.db` read them.

    >>> get_dialect("PostgreSQL").quote_identifier("user")
    '"user"'
    >>> get_dialect("mssql").quote_identifier("order details")
    '[order details]'
    >>> get_dialect("sqlite").quote_identifier("order details")  # never a string
    '`order details`'
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any, Literal

import sqlglot
from pydantic import BaseModel, ConfigDict
from sqlglot import exp

from acts_sql.errors import ConfigError

_REGISTRY: dict[str, Dialect] = {}
"""Canonical name -> dialect, in definition order."""

_LOOKUP: dict[str, Dialect] = {}
"""Lookup key (canonical name or alias, see `_key`) -> dialect."""


TimeoutMethod = Literal["sql", "progress_handler", "interrupt", "driver", "call_timeout"]
"""How an executor bounds one statement's run time:

- "sql": run `Dialect.timeout_sql` (formatted with `ms` / `seconds`) first;
- "progress_handler": SQLite's progress handler aborts past the deadline;
- "interrupt": a timer calls the connection's `interrupt()` (DuckDB);
- "driver": the driver's own query timeout, whole seconds (pymssql);
- "call_timeout": the connection's `call_timeout` in ms (python-oracledb).
"""


class ReflectionQueries(BaseModel):
    """Catalog queries that list a database's user tables, columns and keys.

    Every query takes no parameters and returns positional columns, so that
    one reader serves all dialects (identifier case differs by engine):

    - `tables`: table_schema, table_name, kind ('table' or 'view'),
      row_estimate (NULL when the catalog has none);
    - `columns`: table_schema, table_name, column_name, data_type,
      nullable (truthy, or 'YES'/'Y'), ordinal;
    - `keys`: table_schema, table_name, constraint_name, constraint_type
      ('PRIMARY KEY', 'FOREIGN KEY' or 'UNIQUE'), column_name, ordinal,
      ref_schema, ref_table, ref_column (the last three NULL unless a FK).

    Only user schemas are listed (no system catalogs).
    """

    model_config = ConfigDict(frozen=True)

    tables: str
    columns: str
    keys: str


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

    # Connecting.
    url_schemes: tuple[str, ...] = ()
    """SQLAlchemy-style URL schemes that open this dialect ("postgresql+psycopg")."""
    default_port: int | None = None
    """TCP port when a URL gives none; None for embedded (file) databases."""
    embedded: bool = False
    """The database is a local file opened in-process (SQLite, DuckDB)."""
    default_schema: str | None = None
    """Schema whose tables prompts name without qualification ("public")."""

    # Statement limits. Executors never rewrite the user's SQL to limit rows:
    # they fetch at most max_rows + 1 rows and flag `truncated`.
    timeout_method: TimeoutMethod = "sql"
    """How a statement timeout is enforced; see `TimeoutMethod`."""
    timeout_sql: str | None = None
    """With timeout_method "sql": the statement that sets the timeout, a
    format string over `ms` (int milliseconds) and `seconds` (float)."""
    timeout_sql_alternatives: tuple[str, ...] = ()
    """Tried in order when the server rejects `timeout_sql` (MySQL proper has
    `max_execution_time` where MariaDB has `max_statement_time`)."""

    # Read-only defence in depth (the guard in sql/safety.py comes first).
    read_only_session_sql: tuple[str, ...] = ()
    """Statements that make every later transaction of the session read-only."""
    read_only_begin: str = ""
    """Starts a read-only transaction (always rolled back afterwards); "": none."""
    syntax_probe_sql: str = ""
    """Parses a statement on the server without running it, to return the
    engine's own syntax error for text the guard cannot parse. A format
    string over `name` (a prepared-statement name), `sql` (the raw text) or
    `sql_literal` (the text as a string literal, or a driver placeholder for
    it). "": the executor probes by other means (EXPLAIN, a parser, a catalog
    function)."""

    # Reflection.
    reflection: ReflectionQueries | None = None
    """Catalog queries listing user tables, columns and keys."""

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

    def timeout_statements(self, seconds: float) -> list[str]:
        """`timeout_sql` then its alternatives, for a timeout of `seconds`.

        Empty unless `timeout_method` is "sql". Milliseconds are at least 1,
        because 0 means "no timeout" to PostgreSQL and MySQL.
        """
        if self.timeout_method != "sql" or self.timeout_sql is None:
            return []
        ms = max(1, math.ceil(seconds * 1000))
        secs = max(0.001, round(seconds, 3))
        templates = (self.timeout_sql, *self.timeout_sql_alternatives)
        return [template.format(ms=ms, seconds=f"{secs:g}") for template in templates]

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


_SQLITE_USER_OBJECTS = "m.type IN ('table', 'view') AND m.name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"


class SQLite(Dialect):
    name: str = "sqlite"
    sqlglot_name: str = "sqlite"
    display_name: str = "SQLite"
    aliases: tuple[str, ...] = ("sqlite3",)
    identifier_quotes: tuple[tuple[str, str], ...] = (('"', '"'), ("`", "`"), ("[", "]"))
    strict_identifier_quotes: tuple[str, str] | None = ("`", "`")
    url_schemes: tuple[str, ...] = ("sqlite", "sqlite3", "sqlite+pysqlite")
    embedded: bool = True
    default_schema: str | None = "main"
    timeout_method: TimeoutMethod = "progress_handler"
    reflection: ReflectionQueries | None = ReflectionQueries(
        tables=(
            "SELECT 'main', m.name, m.type, NULL FROM sqlite_master AS m "
            f"WHERE {_SQLITE_USER_OBJECTS} ORDER BY m.type = 'view', m.rowid"
        ),
        columns=(
            "SELECT 'main', m.name, p.name, p.type, NOT p.\"notnull\", p.cid + 1 "
            "FROM sqlite_master AS m JOIN pragma_table_info(m.name) AS p "
            f"WHERE {_SQLITE_USER_OBJECTS} ORDER BY m.rowid, p.cid"
        ),
        keys=(
            "SELECT 'main', m.name, 'pk', 'PRIMARY KEY', p.name, p.pk, NULL, NULL, NULL "
            "FROM sqlite_master AS m JOIN pragma_table_info(m.name) AS p "
            f"WHERE {_SQLITE_USER_OBJECTS} AND p.pk > 0 "
            "UNION ALL "
            "SELECT 'main', m.name, 'fk' || f.id, 'FOREIGN KEY', f.\"from\", f.seq + 1, "
            '\'main\', f."table", f."to" '
            "FROM sqlite_master AS m JOIN pragma_foreign_key_list(m.name) AS f "
            f"WHERE {_SQLITE_USER_OBJECTS} "
            "ORDER BY 2, 3, 6"
        ),
    )


_PG_USER_SCHEMA = (
    "n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'"
)
_PG_RELKINDS = "c.relkind IN ('r', 'p', 'v', 'm', 'f')"


class PostgreSQL(Dialect):
    name: str = "postgresql"
    sqlglot_name: str = "postgres"
    display_name: str = "PostgreSQL"
    aliases: tuple[str, ...] = ("postgres", "pg", "pgsql", "psql")
    dollar_quoting: bool = True
    url_schemes: tuple[str, ...] = (
        "postgresql",
        "postgres",
        "postgresql+psycopg",
        "postgresql+psycopg2",
        "pgsql",
    )
    default_port: int | None = 5432
    default_schema: str | None = "public"
    timeout_sql: str | None = "SET statement_timeout = {ms}"
    read_only_session_sql: tuple[str, ...] = (
        "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY",
    )
    read_only_begin: str = "BEGIN TRANSACTION READ ONLY"
    syntax_probe_sql: str = "PREPARE {name} AS {sql}"
    reflection: ReflectionQueries | None = ReflectionQueries(
        tables=(
            "SELECT n.nspname, c.relname, "
            "CASE WHEN c.relkind IN ('v', 'm') THEN 'view' ELSE 'table' END, "
            "CASE WHEN c.relkind IN ('v', 'm') OR c.reltuples < 0 THEN NULL "
            "ELSE CAST(c.reltuples AS BIGINT) END "
            "FROM pg_catalog.pg_class AS c "
            "JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace "
            f"WHERE {_PG_RELKINDS} AND NOT c.relispartition AND {_PG_USER_SCHEMA} "
            "ORDER BY c.relkind IN ('v', 'm'), 1, 2"
        ),
        columns=(
            "SELECT n.nspname, c.relname, a.attname, "
            "pg_catalog.format_type(a.atttypid, a.atttypmod), NOT a.attnotnull, a.attnum "
            "FROM pg_catalog.pg_attribute AS a "
            "JOIN pg_catalog.pg_class AS c ON c.oid = a.attrelid "
            "JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace "
            f"WHERE a.attnum > 0 AND NOT a.attisdropped AND {_PG_RELKINDS} "
            f"AND {_PG_USER_SCHEMA} ORDER BY 1, 2, 6"
        ),
        keys=(
            "SELECT n.nspname, c.relname, con.conname, "
            "CASE con.contype WHEN 'p' THEN 'PRIMARY KEY' WHEN 'f' THEN 'FOREIGN KEY' "
            "ELSE 'UNIQUE' END, a.attname, k.ord, rn.nspname, rc.relname, ra.attname "
            "FROM pg_catalog.pg_constraint AS con "
            "JOIN pg_catalog.pg_class AS c ON c.oid = con.conrelid "
            "JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace "
            "CROSS JOIN LATERAL UNNEST(con.conkey) WITH ORDINALITY AS k(attnum, ord) "
            "JOIN pg_catalog.pg_attribute AS a "
            "ON a.attrelid = con.conrelid AND a.attnum = k.attnum "
            "LEFT JOIN pg_catalog.pg_class AS rc ON rc.oid = con.confrelid "
            "LEFT JOIN pg_catalog.pg_namespace AS rn ON rn.oid = rc.relnamespace "
            "LEFT JOIN pg_catalog.pg_attribute AS ra "
            "ON ra.attrelid = con.confrelid AND ra.attnum = con.confkey[k.ord] "
            f"WHERE con.contype IN ('p', 'f', 'u') AND {_PG_USER_SCHEMA} "
            "ORDER BY 1, 2, 3, 6"
        ),
    )


class MySQL(Dialect):
    name: str = "mysql"
    sqlglot_name: str = "mysql"
    display_name: str = "MySQL"
    aliases: tuple[str, ...] = ("mariadb",)
    string_quotes: tuple[str, ...] = ("'", '"')
    identifier_quotes: tuple[tuple[str, str], ...] = (("`", "`"),)
    line_comments: tuple[str, ...] = ("--", "#")
    backslash_escapes: bool = True
    url_schemes: tuple[str, ...] = (
        "mysql",
        "mariadb",
        "mysql+pymysql",
        "mariadb+pymysql",
        "mysql+mysqldb",
        "mariadb+mariadbconnector",
    )
    default_port: int | None = 3306
    timeout_sql: str | None = "SET SESSION max_statement_time = {seconds}"
    timeout_sql_alternatives: tuple[str, ...] = ("SET SESSION max_execution_time = {ms}",)
    read_only_session_sql: tuple[str, ...] = ("SET SESSION TRANSACTION READ ONLY",)
    read_only_begin: str = "START TRANSACTION READ ONLY"
    syntax_probe_sql: str = "PREPARE {name} FROM {sql_literal}"
    reflection: ReflectionQueries | None = ReflectionQueries(
        tables=(
            "SELECT table_schema, table_name, "
            "CASE WHEN table_type = 'VIEW' THEN 'view' ELSE 'table' END, table_rows "
            "FROM information_schema.tables WHERE table_schema = DATABASE() "
            "ORDER BY table_type = 'VIEW', table_name"
        ),
        columns=(
            "SELECT table_schema, table_name, column_name, column_type, "
            "is_nullable = 'YES', ordinal_position FROM information_schema.columns "
            "WHERE table_schema = DATABASE() ORDER BY table_name, ordinal_position"
        ),
        keys=(
            "SELECT k.table_schema, k.table_name, k.constraint_name, t.constraint_type, "
            "k.column_name, k.ordinal_position, k.referenced_table_schema, "
            "k.referenced_table_name, k.referenced_column_name "
            "FROM information_schema.key_column_usage AS k "
            "JOIN information_schema.table_constraints AS t "
            "ON t.constraint_schema = k.constraint_schema AND t.table_name = k.table_name "
            "AND t.constraint_name = k.constraint_name "
            "WHERE k.table_schema = DATABASE() "
            "AND t.constraint_type IN ('PRIMARY KEY', 'FOREIGN KEY', 'UNIQUE') "
            "ORDER BY k.table_name, k.constraint_name, k.ordinal_position"
        ),
    )


_INFO_SCHEMA_KEYS = (
    "SELECT k.TABLE_SCHEMA, k.TABLE_NAME, k.CONSTRAINT_NAME, c.CONSTRAINT_TYPE, "
    "k.COLUMN_NAME, k.ORDINAL_POSITION, u.TABLE_SCHEMA, u.TABLE_NAME, u.COLUMN_NAME "
    "FROM INFORMATION_SCHEMA.TABLE_CONSTRAINTS AS c "
    "JOIN INFORMATION_SCHEMA.KEY_COLUMN_USAGE AS k "
    "ON k.CONSTRAINT_SCHEMA = c.CONSTRAINT_SCHEMA AND k.CONSTRAINT_NAME = c.CONSTRAINT_NAME "
    "AND k.TABLE_NAME = c.TABLE_NAME "
    "LEFT JOIN INFORMATION_SCHEMA.REFERENTIAL_CONSTRAINTS AS r "
    "ON r.CONSTRAINT_SCHEMA = c.CONSTRAINT_SCHEMA AND r.CONSTRAINT_NAME = c.CONSTRAINT_NAME "
    "LEFT JOIN INFORMATION_SCHEMA.KEY_COLUMN_USAGE AS u "
    "ON u.CONSTRAINT_SCHEMA = r.UNIQUE_CONSTRAINT_SCHEMA "
    "AND u.CONSTRAINT_NAME = r.UNIQUE_CONSTRAINT_NAME AND u.ORDINAL_POSITION = {ref_position} "
    "WHERE c.CONSTRAINT_TYPE IN ('PRIMARY KEY', 'FOREIGN KEY', 'UNIQUE') {extra}"
    "ORDER BY 1, 2, 3, 6"
)


class SQLServer(Dialect):
    name: str = "sqlserver"
    sqlglot_name: str = "tsql"
    display_name: str = "SQL Server"
    aliases: tuple[str, ...] = ("mssql", "tsql", "t-sql", "azuresql")
    identifier_quotes: tuple[tuple[str, str], ...] = (('"', '"'), ("[", "]"))
    routine_body_runs_to_end: bool = True
    url_schemes: tuple[str, ...] = ("mssql", "mssql+pymssql", "sqlserver")
    default_port: int | None = 1433
    default_schema: str | None = "dbo"
    timeout_method: TimeoutMethod = "driver"
    reflection: ReflectionQueries | None = ReflectionQueries(
        tables=(
            "SELECT t.TABLE_SCHEMA, t.TABLE_NAME, "
            "CASE WHEN t.TABLE_TYPE = 'VIEW' THEN 'view' ELSE 'table' END, "
            "(SELECT SUM(p.rows) FROM sys.partitions AS p WHERE p.object_id = "
            "OBJECT_ID(QUOTENAME(t.TABLE_SCHEMA) + '.' + QUOTENAME(t.TABLE_NAME)) "
            "AND p.index_id IN (0, 1)) "
            "FROM INFORMATION_SCHEMA.TABLES AS t "
            "WHERE t.TABLE_SCHEMA NOT IN ('sys', 'INFORMATION_SCHEMA') "
            "ORDER BY CASE WHEN t.TABLE_TYPE = 'VIEW' THEN 1 ELSE 0 END, 1, 2"
        ),
        columns=(
            "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, DATA_TYPE + CASE "
            "WHEN CHARACTER_MAXIMUM_LENGTH = -1 THEN '(max)' "
            "WHEN CHARACTER_MAXIMUM_LENGTH IS NOT NULL "
            "THEN '(' + CAST(CHARACTER_MAXIMUM_LENGTH AS VARCHAR(10)) + ')' "
            "WHEN DATA_TYPE IN ('decimal', 'numeric') THEN '(' + "
            "CAST(NUMERIC_PRECISION AS VARCHAR(10)) + ',' + "
            "CAST(NUMERIC_SCALE AS VARCHAR(10)) + ')' ELSE '' END, "
            "CASE WHEN IS_NULLABLE = 'YES' THEN 1 ELSE 0 END, ORDINAL_POSITION "
            "FROM INFORMATION_SCHEMA.COLUMNS "
            "WHERE TABLE_SCHEMA NOT IN ('sys', 'INFORMATION_SCHEMA') ORDER BY 1, 2, 6"
        ),
        keys=_INFO_SCHEMA_KEYS.format(ref_position="k.ORDINAL_POSITION", extra=""),
    )


class Oracle(Dialect):
    name: str = "oracle"
    sqlglot_name: str = "oracle"
    display_name: str = "Oracle"
    aliases: tuple[str, ...] = ("oracledb", "plsql")
    declarations_before_begin: bool = True
    url_schemes: tuple[str, ...] = ("oracle", "oracle+oracledb", "oracle+cx_oracle")
    default_port: int | None = 1521
    timeout_method: TimeoutMethod = "call_timeout"
    read_only_begin: str = "SET TRANSACTION READ ONLY"
    reflection: ReflectionQueries | None = ReflectionQueries(
        tables=(
            "SELECT USER, table_name, 'table', num_rows FROM user_tables "
            "WHERE dropped = 'NO' AND nested = 'NO' AND secondary = 'N' "
            "UNION ALL SELECT USER, view_name, 'view', NULL FROM user_views "
            "ORDER BY 3, 2"
        ),
        columns=(
            "SELECT USER, table_name, column_name, data_type || CASE "
            "WHEN data_type IN ('VARCHAR2', 'NVARCHAR2', 'CHAR', 'NCHAR') "
            "THEN '(' || char_length || ')' "
            "WHEN data_type = 'RAW' THEN '(' || data_length || ')' "
            "WHEN data_type = 'NUMBER' AND data_precision IS NOT NULL "
            "THEN '(' || data_precision || ',' || data_scale || ')' ELSE '' END, "
            "CASE WHEN nullable = 'Y' THEN 1 ELSE 0 END, column_id "
            "FROM user_tab_columns ORDER BY table_name, column_id"
        ),
        keys=(
            "SELECT USER, c.table_name, c.constraint_name, CASE c.constraint_type "
            "WHEN 'P' THEN 'PRIMARY KEY' WHEN 'R' THEN 'FOREIGN KEY' ELSE 'UNIQUE' END, "
            "cc.column_name, cc.position, r.owner, r.table_name, rc.column_name "
            "FROM user_constraints c "
            "JOIN user_cons_columns cc ON cc.constraint_name = c.constraint_name "
            "LEFT JOIN all_constraints r "
            "ON r.owner = c.r_owner AND r.constraint_name = c.r_constraint_name "
            "LEFT JOIN all_cons_columns rc ON rc.owner = r.owner "
            "AND rc.constraint_name = r.constraint_name AND rc.position = cc.position "
            "WHERE c.constraint_type IN ('P', 'R', 'U') "
            "ORDER BY 2, 3, 6"
        ),
    )


_DUCKDB_USER_SCHEMA = (
    "{t}table_catalog = current_database() "
    "AND {t}table_schema NOT IN ('information_schema', 'pg_catalog')"
)


class DuckDB(Dialect):
    name: str = "duckdb"
    sqlglot_name: str = "duckdb"
    display_name: str = "DuckDB"
    aliases: tuple[str, ...] = ("duck",)
    dollar_quoting: bool = True
    url_schemes: tuple[str, ...] = ("duckdb",)
    embedded: bool = True
    default_schema: str | None = "main"
    timeout_method: TimeoutMethod = "interrupt"
    reflection: ReflectionQueries | None = ReflectionQueries(
        tables=(
            "SELECT t.table_schema, t.table_name, "
            "CASE WHEN t.table_type = 'VIEW' THEN 'view' ELSE 'table' END, d.estimated_size "
            "FROM information_schema.tables AS t LEFT JOIN duckdb_tables() AS d "
            "ON d.database_name = t.table_catalog AND d.schema_name = t.table_schema "
            "AND d.table_name = t.table_name "
            f"WHERE {_DUCKDB_USER_SCHEMA.format(t='t.')} "
            "ORDER BY t.table_type = 'VIEW', 1, 2"
        ),
        columns=(
            "SELECT table_schema, table_name, column_name, data_type, is_nullable, "
            "ordinal_position FROM information_schema.columns "
            f"WHERE {_DUCKDB_USER_SCHEMA.format(t='')} ORDER BY 1, 2, 6"
        ),
        keys=_INFO_SCHEMA_KEYS.format(
            ref_position="k.POSITION_IN_UNIQUE_CONSTRAINT",
            extra="AND c.TABLE_CATALOG = current_database() ",
        ),
    )


# ------------------------------------------------------------------ lookup


def dialect_names() -> list[str]:
    """Canonical names of all registered dialects, in definition order."""
    return list(_REGISTRY)


def all_dialects() -> list[Dialect]:
    """All registered dialects, in definition order."""
    return list(_REGISTRY.values())


def find_dialect(name: str | Dialect) -> Dialect | None:
    """The dialect called `name` (as `get_dialect`), or None when no dialect is called so."""
    if isinstance(name, Dialect):
        return name
    return _LOOKUP.get(_key(name)) if isinstance(name, str) else None


def lookup_key(name: str) -> str:
    """The key names are compared by: case, spaces, '-' and '_' do not matter."""
    return _key(name)


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
