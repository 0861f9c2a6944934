"""Deterministic repairs: re-reading, transpiling, identifier repair, ORDER BY detection.

Every SQLite case is also executed against an in-memory database with the
schema below: the input fails (or, for a negative case, nothing is offered)
and the repaired statement runs.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from acts_sql.errors import ConfigError
from acts_sql.sql.diagnostics import parse_statements
from acts_sql.sql.query_text import normalize_sql
from acts_sql.sql.repairs import (
    MAX_TRANSPILED,
    UnknownName,
    _error_identifier,
    describe_unknown,
    has_top_level_order_by,
    repair_identifiers,
    reparse_in_dialect,
    transpile_from_detected,
    unknown_identifiers,
)

DDL = """
CREATE TABLE users (id INTEGER PRIMARY KEY, user_name TEXT, email TEXT, age INTEGER,
                    created_at TEXT);
CREATE TABLE orders (id INTEGER PRIMARY KEY, user_id INTEGER, total REAL, status TEXT,
                     created_at TEXT);
CREATE TABLE order_items (order_id INTEGER, product TEXT, qty INTEGER);
CREATE TABLE events (id INTEGER PRIMARY KEY, created_at TEXT, created_by TEXT);
INSERT INTO users VALUES (1, 'ann', 'a@x', 34, '2024-01-02'), (2, 'bob', NULL, 19, '2024-03-04');
INSERT INTO orders VALUES (1, 1, 9.5, 'paid', '2024-02-01'), (2, 1, 20.0, 'new', '2024-02-03');
INSERT INTO order_items VALUES (1, 'pen', 2);
"""

SCHEMA: dict[str, list[str]] = {
    "users": ["id", "user_name", "email", "age", "created_at"],
    "orders": ["id", "user_id", "total", "status", "created_at"],
    "order_items": ["order_id", "product", "qty"],
    "events": ["id", "created_at", "created_by"],
}


def sqlite_error(sql: str) -> str | None:
    """The error SQLite gives for `sql` on the fixture database; None when it runs."""
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(DDL)
        db.executescript(sql) if ";" in sql.rstrip("; \n") else db.execute(sql).fetchall()
    except sqlite3.Error as error:
        return str(error)
    finally:
        db.close()
    return None


def parses(sql: str, dialect: str) -> bool:
    return bool(parse_statements(sql, dialect))


def test_the_fixture_schema_matches_the_database() -> None:
    db = sqlite3.connect(":memory:")
    db.executescript(DDL)
    for table, columns in SCHEMA.items():
        assert [row[1] for row in db.execute(f"PRAGMA table_info({table})")] == columns
    db.close()


# ----------------------------------------------------------- reparse_in_dialect

REPARSE_FIXES = [
    (
        "SELECT user_name FROM users WHERE (age > 30",
        "sqlite",
        "SELECT user_name FROM users WHERE (age > 30)",
    ),
    (
        "SELECT user_name FROM users WHERE age > 30)",
        "sqlite",
        "SELECT user_name FROM users WHERE age > 30",
    ),
    (
        "SELECT user_name, FROM users WHERE (age > 30",
        "sqlite",
        "SELECT user_name FROM users WHERE (age > 30)",
    ),
    (
        "SELECT COUNT(*) FROM orders WHERE status IN ('paid', 'new'",
        "sqlite",
        "SELECT COUNT(*) FROM orders WHERE status IN ('paid', 'new')",
    ),
    ("SELECT NVL(age, 0) FROM users", "postgresql", "SELECT COALESCE(age, 0) FROM users"),
    (
        "SELECT user_name FROM users WHERE age IN (SELECT age FROM users WHERE age > 3",
        "postgresql",
        "SELECT user_name FROM users WHERE age IN (SELECT age FROM users WHERE age > 3)",
    ),
    (
        'SELECT user_name FROM users WHERE (age > 30 AND status = "x"',
        "mysql",
        "SELECT user_name FROM users WHERE (age > 30 AND status = 'x')",
    ),
    (
        "SELECT TOP 3 user_name FROM users WHERE (age > 30",
        "sqlserver",
        "SELECT TOP 3 user_name FROM users WHERE (age > 30)",
    ),
    (
        "SELECT user_name FROM users WHERE (age > 30",
        "duckdb",
        "SELECT user_name FROM users WHERE (age > 30)",
    ),
    (
        "SELECT user_name FROM users LIMIT 3",
        "oracle",
        "SELECT user_name FROM users FETCH FIRST 3 ROWS ONLY",
    ),
    ("SELECT IFNULL(age, 0) FROM users", "sqlserver", "SELECT COALESCE(age, 0) FROM users"),
]


@pytest.mark.parametrize(("sql", "dialect", "expected"), REPARSE_FIXES)
def test_reparse_offers_sqlglots_reading(sql: str, dialect: str, expected: str) -> None:
    fixed = reparse_in_dialect(sql, dialect)
    assert fixed == expected
    assert parses(fixed, dialect)
    assert normalize_sql(fixed, dialect) != normalize_sql(sql, dialect)
    if dialect == "sqlite":
        assert sqlite_error(sql) is not None
        assert sqlite_error(fixed) is None


REPARSE_NOTHING = [
    ("SELECT user_name FROM users WHERE age > 30", "sqlite"),  # already fine
    ("select   user_name\nfrom users -- note\n", "postgresql"),  # only cosmetics differ
    ("SELEC user_name FROM users", "sqlite"),  # not a statement: nothing to read
    ("SELECT TOP 3 a FROM t", "postgresql"),  # the lenient reading drops `a FROM t`
    ("SELECT user_name FROM users WHERE age > 30) ORDER BY 1", "oracle"),  # loses ORDER BY
    ("SELECT 'unterminated", "sqlite"),  # cannot even be tokenized
    ("", "sqlite"),
    ("  ; -- nothing\n", "duckdb"),
]


@pytest.mark.parametrize(("sql", "dialect"), REPARSE_NOTHING)
def test_reparse_offers_nothing_when_lossy_or_unchanged(sql: str, dialect: str) -> None:
    assert reparse_in_dialect(sql, dialect) is None


@pytest.mark.parametrize(
    ("sql", "fixed", "dialect"),
    [
        ("SELECT user_name, age, FROM users", "SELECT user_name, age FROM users", "sqlite"),
        (
            "SELECT user_name FROM users WHERE age == 34",
            "SELECT user_name FROM users WHERE age = 34",
            "postgresql",
        ),
        (
            "SELECT user_name FROM users LIMIT 1, 2",
            "SELECT user_name FROM users LIMIT 2 OFFSET 1",
            "postgresql",
        ),
    ],
)
def test_defects_normalize_reads_past_are_offered_only_if_normalize_tells_them_apart(
    sql: str, fixed: str, dialect: str
) -> None:
    # normalize_sql (the engine's notion of "the same candidate") reads these
    # defects the way sqlglot does; a candidate it cannot tell from the input
    # would be dropped by the engine, so none is offered.
    result = reparse_in_dialect(sql, dialect)
    if normalize_sql(sql, dialect) == normalize_sql(fixed, dialect):
        assert result is None
    else:
        assert result == fixed


def test_sqlite_renderings_keep_what_quoted_names_mean() -> None:
    # A misspelt `name` rendered as "name" would quietly become a string in
    # SQLite; with backticks it keeps failing, like the input.
    misspelt = "SELECT `usr_name` FROM users WHERE (age > 3"
    fixed = reparse_in_dialect(misspelt, "sqlite")
    assert fixed == "SELECT `usr_name` FROM users WHERE (age > 3)"
    assert sqlite_error(fixed) == "no such column: usr_name"
    # A "string" the user double-quoted keeps its double quotes (and meaning).
    strings = 'SELECT user_name FROM users WHERE user_name = "bob" AND (age > 3'
    fixed = reparse_in_dialect(strings, "sqlite")
    assert fixed == 'SELECT user_name FROM users WHERE user_name = "bob" AND (age > 3)'
    assert sqlite_error(fixed) is None


def test_reparse_keeps_every_statement() -> None:
    fixed = reparse_in_dialect("SELECT 1; SELECT user_name FROM users WHERE (age > 3", "sqlite")
    assert fixed == "SELECT 1;\nSELECT user_name FROM users WHERE (age > 3)"
    assert len(parse_statements(fixed, "sqlite")) == 2


# ------------------------------------------------------ transpile_from_detected

TRANSPILE_CASES = [
    (
        "SELECT TOP 3 user_name FROM users ORDER BY age DESC",
        "sqlite",
        "sqlserver",
        "SELECT user_name FROM users ORDER BY age DESC LIMIT 3",
    ),
    (
        "SELECT [user_name], ISNULL(age, 0) FROM users",
        "sqlite",
        "sqlserver",
        "SELECT `user_name`, COALESCE(age, 0) FROM users",
    ),
    (
        "SELECT `user_name`, IFNULL(age, 0) FROM users LIMIT 1, 2",
        "postgresql",
        "mysql",
        'SELECT "user_name", COALESCE(age, 0) FROM users LIMIT 2 OFFSET 1',
    ),
    (
        "SELECT `user_name`, IFNULL(age, 0) FROM users LIMIT 1, 2",
        "duckdb",
        "mysql",
        'SELECT "user_name", COALESCE(age, 0) FROM users LIMIT 2 OFFSET 1',
    ),
    (
        "SELECT NVL(age, 0), SYSDATE FROM users",
        "postgresql",
        "oracle",
        "SELECT COALESCE(age, 0), CURRENT_TIMESTAMP FROM users",
    ),
    (
        "SELECT DATE_FORMAT(created_at, '%Y-%m') FROM orders",
        "postgresql",
        "mysql",
        "SELECT TO_CHAR(CAST(created_at AS TIMESTAMP), 'YYYY-MM') FROM orders",
    ),
    (
        "SELECT strftime('%Y', created_at) FROM orders",
        "postgresql",
        "sqlite",
        "SELECT TO_CHAR(CAST(created_at AS TIMESTAMP), 'YYYY') FROM orders",
    ),
    (
        "SELECT TOP 5 user_name, GETDATE() FROM users",
        "mysql",
        "sqlserver",
        "SELECT user_name, CURRENT_TIMESTAMP() FROM users LIMIT 5",
    ),
    (
        "SELECT DATEADD(day, 1, created_at) FROM orders",
        "postgresql",
        "sqlserver",
        "SELECT created_at + INTERVAL '1 DAY' FROM orders",
    ),
]


@pytest.mark.parametrize(("sql", "target", "source", "expected"), TRANSPILE_CASES)
def test_transpile_from_the_detected_dialect(
    sql: str, target: str, source: str, expected: str
) -> None:
    found = transpile_from_detected(sql, target)
    assert found[0] == (source, expected)
    assert len(found) <= MAX_TRANSPILED
    keys = [normalize_sql(text, target) for _, text in found]
    assert len(set(keys)) == len(keys)  # distinct
    assert normalize_sql(sql, target) not in keys
    reparsed = reparse_in_dialect(sql, target)
    assert reparsed is None or normalize_sql(reparsed, target) not in keys
    for _, text in found:
        assert parses(text, target)
    if target == "sqlite":
        assert sqlite_error(sql) is not None
        assert sqlite_error(expected) is None


@pytest.mark.parametrize(
    ("sql", "target"),
    [
        ("SELECT user_name FROM users WHERE age > 3", "sqlite"),  # native already
        ("SELECT user_name FROM users WHERE ROWNUM <= 3", "postgresql"),  # ROWNUM survives
        ("SELECT user_name FROM users WHERE created_at > date('now', '-7 days')", "postgresql"),
        ("SELECT user_name::text FROM users", "sqlite"),  # reparse already offers it
        ("SELEC nonsense FROM", "mysql"),
        ("", "oracle"),
    ],
)
def test_transpile_offers_nothing_useless(sql: str, target: str) -> None:
    assert transpile_from_detected(sql, target) == []


def test_untranslated_tokens_of_another_dialect_are_not_offered() -> None:
    # Oracle's parser accepts T-SQL's TOP, but its output to MySQL keeps GETDATE().
    found = transpile_from_detected("SELECT TOP 5 user_name, GETDATE() FROM users", "mysql")
    assert all("GETDATE" not in text.upper() for _, text in found)


def test_transpile_accepts_dialect_aliases() -> None:
    assert transpile_from_detected("SELECT TOP 3 user_name FROM users", "sqlite3")[0] == (
        "sqlserver",
        "SELECT user_name FROM users LIMIT 3",
    )


# ------------------------------------------------------------ unknown_identifiers

U = UnknownName

UNKNOWN_CASES: list[tuple[str, str, list[UnknownName]]] = [
    (
        "SELECT usr_name FROM users",
        "sqlite",
        [U(name="usr_name", kind="column", table="users", nearest=["user_name"])],
    ),
    (
        "SELECT u.usr_name FROM users AS u JOIN orders AS o ON o.user_id = u.id",
        "sqlite",
        [U(name="usr_name", kind="column", table="users", nearest=["user_name"])],
    ),
    ("SELECT user_name FROM userz", "sqlite", [U(name="userz", kind="table", nearest=["users"])]),
    ("SELECT id FROM order", "postgresql", [U(name="order", kind="table", nearest=["orders"])]),
    ("SELECT id FROM user", "sqlite", [U(name="user", kind="table", nearest=["users"])]),
    (
        "SELECT product FROM order_item",
        "duckdb",
        [U(name="order_item", kind="table", nearest=["order_items"])],
    ),
    (
        "SELECT userName FROM users",
        "mysql",
        [U(name="userName", kind="column", table="users", nearest=["user_name"])],
    ),
    (
        "SELECT total FROM users",
        "sqlite",
        [U(name="total", kind="column", table="users", nearest=["orders.total"])],
    ),
    (
        "SELECT created FROM events",
        "sqlite",
        [
            U(
                name="created",
                kind="column",
                table="events",
                nearest=["created_at", "created_by", "orders.created_at"],
            )
        ],
    ),
    (
        "SELECT o.usr_id FROM orders o JOIN users u ON u.id = o.usr_id",
        "postgresql",
        [U(name="usr_id", kind="column", table="orders", nearest=["user_id"])],
    ),
    (
        "SELECT qty FROM orders o JOIN users u ON u.id = o.user_id",
        "sqlite",
        [U(name="qty", kind="column", table=None, nearest=["order_items.qty"])],
    ),
    (
        "WITH big AS (SELECT user_id, SUM(total) AS spent FROM orders GROUP BY user_id) "
        "SELECT b.spnt FROM big AS b",
        "sqlite",
        [U(name="spnt", kind="column", table="big", nearest=["spent"])],
    ),
    (
        "SELECT d.usr_name FROM (SELECT * FROM users) AS d",
        "sqlite",
        [U(name="usr_name", kind="column", table="d", nearest=["user_name", "users.user_name"])],
    ),
    (
        "SELECT user_name FROM users u WHERE EXISTS "
        "(SELECT 1 FROM orders o WHERE o.user_id = u.id AND stauts = 'paid')",
        "sqlite",
        [U(name="stauts", kind="column", table="orders", nearest=["status"])],
    ),
    (
        "SELECT x.user_name FROM users AS u",
        "sqlite",
        [U(name="x", kind="table", nearest=[])],
    ),
    (
        'SELECT "User_Name" FROM users',
        "postgresql",
        [U(name="User_Name", kind="column", table="users", nearest=["user_name"])],
    ),
    (
        "UPDATE users SET usr_name = 'x' WHERE agee > 3",
        "sqlite",
        [
            U(name="usr_name", kind="column", table="users", nearest=["user_name"]),
            U(name="agee", kind="column", table="users", nearest=["age"]),
        ],
    ),
    (
        "INSERT INTO users (id, usr_name) SELECT id, status FROM orders",
        "sqlite",
        [U(name="usr_name", kind="column", table="users", nearest=["user_name"])],
    ),
    (
        "DELETE FROM userz WHERE id = 1",
        "sqlite",
        [U(name="userz", kind="table", nearest=["users"])],
    ),
    (
        "SELECT usr_name FROM users; SELECT totl FROM orders",
        "sqlite",
        [
            U(name="usr_name", kind="column", table="users", nearest=["user_name"]),
            U(name="totl", kind="column", table="orders", nearest=["total"]),
        ],
    ),
    (
        "SELECT usr_name FROM users WHERE (age > 3",  # read leniently first
        "sqlite",
        [U(name="usr_name", kind="column", table="users", nearest=["user_name"])],
    ),
]


@pytest.mark.parametrize(("sql", "dialect", "expected"), UNKNOWN_CASES)
def test_unknown_identifiers(sql: str, dialect: str, expected: list[UnknownName]) -> None:
    assert unknown_identifiers(sql, dialect, SCHEMA) == expected


KNOWN_NAMES = [
    # CTE names, their columns and their aliases
    "WITH big AS (SELECT user_id, SUM(total) AS spent FROM orders GROUP BY user_id) "
    "SELECT b.spent, spent, b.user_id FROM big AS b WHERE spent > 1 ORDER BY spent",
    # a CTE with a column list, and a recursive one
    "WITH c(uid, n) AS (SELECT id, age FROM users) SELECT c.uid, n FROM c",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT n FROM r",
    # derived tables, their aliases, their columns (a star expanded over users)
    "SELECT d.x FROM (SELECT id AS x FROM users) AS d",
    "SELECT d.user_name, d.total FROM (SELECT u.*, o.total FROM users u JOIN orders o "
    "ON o.user_id = u.id) AS d",
    # SELECT-list aliases in WHERE, GROUP BY, HAVING and ORDER BY (SQLite allows all)
    "SELECT age * 2 AS dbl FROM users WHERE dbl > 3 GROUP BY dbl HAVING dbl > 1 ORDER BY dbl",
    # correlated subqueries, set operations, window functions
    "SELECT user_name FROM users u WHERE EXISTS (SELECT 1 FROM orders o WHERE o.user_id = u.id)",
    "SELECT user_name FROM users UNION SELECT status FROM orders ORDER BY 1",
    "SELECT ROW_NUMBER() OVER (PARTITION BY status ORDER BY total) AS rn FROM orders",
    # pseudo-columns, system tables, table functions, string literals in double quotes
    "SELECT rowid, user_name FROM users",
    "SELECT name FROM sqlite_master WHERE type = 'table'",
    "SELECT value FROM users, json_each('[1, 2]')",
    'SELECT user_name FROM users WHERE user_name = "bob"',
    # case-insensitive matching of unquoted names
    "SELECT USER_NAME FROM Users",
]


@pytest.mark.parametrize("sql", KNOWN_NAMES)
def test_visible_names_are_not_reported(sql: str) -> None:
    assert unknown_identifiers(sql, "sqlite", SCHEMA) == []
    assert repair_identifiers(sql, "sqlite", SCHEMA) is None
    assert sqlite_error(sql) is None  # they really are fine


@pytest.mark.parametrize(
    ("sql", "dialect"),
    [
        ("SELECT users.user_name FROM users", "postgresql"),
        ("SELECT COUNT(*) FROM orders o LEFT JOIN users u ON u.id = o.user_id", "duckdb"),
        ("SELECT [user_name] FROM [users]", "sqlserver"),
        ("SELECT `user_name` FROM `users`", "mysql"),
        ("SELECT t.id FROM (VALUES (1), (2)) AS t(id)", "postgresql"),
        ("SELECT n FROM users CROSS JOIN generate_series(1, 3) AS g(n)", "postgresql"),
        ("CREATE TABLE fresh AS SELECT id FROM users", "postgresql"),
        ("DROP TABLE anything", "sqlite"),
    ],
)
def test_nothing_unknown_in_other_dialects(sql: str, dialect: str) -> None:
    assert unknown_identifiers(sql, dialect, SCHEMA) == []


def test_quoted_names_are_case_sensitive_only_where_the_database_says_so() -> None:
    schema = {"Users": ["Id", "UserName"]}
    assert unknown_identifiers('SELECT "UserName" FROM "Users"', "postgresql", schema) == []
    assert unknown_identifiers('SELECT "username" FROM "Users"', "postgresql", schema) == [
        U(name="username", kind="column", table="Users", nearest=["UserName"])
    ]
    assert unknown_identifiers('SELECT "username" FROM "users"', "sqlite", schema) == []


def test_unreadable_sql_or_an_empty_schema_reports_nothing() -> None:
    assert unknown_identifiers("SELEC x FROM", "sqlite", SCHEMA) == []
    assert unknown_identifiers("SELECT usr FROM users", "sqlite", {}) == []


# ------------------------------------------------------------- repair_identifiers

REPAIRS = [
    ("SELECT usr_name FROM users", "sqlite", None, "SELECT user_name FROM users"),
    (
        "SELECT u.usr_name, o.totl\nFROM users AS u\nJOIN orders AS o ON o.usr_id = u.id",
        "sqlite",
        None,
        "SELECT u.user_name, o.total\nFROM users AS u\nJOIN orders AS o ON o.user_id = u.id",
    ),
    # an unaliased table: its qualifier follows, and its columns are checked next round
    (
        "SELECT userz.usr_name FROM userz -- who\nWHERE userz.age > 3",
        "sqlite",
        None,
        "SELECT users.user_name FROM users -- who\nWHERE users.age > 3",
    ),
    ("SELECT product FROM order_item", "sqlite", None, "SELECT product FROM order_items"),
    (
        "SELECT total FROM order WHERE id = 1",
        "sqlite",
        None,
        "SELECT total FROM orders WHERE id = 1",
    ),
    ("SELECT userName FROM users", "sqlite", None, "SELECT user_name FROM users"),
    # the table's name as a prefix: user_email is email in users
    ("SELECT u.user_email FROM users AS u", "sqlite", None, "SELECT u.email FROM users AS u"),
    # in two joined tables: qualified with the one whose name prefixes it
    (
        "SELECT order_created_at FROM orders o JOIN users u ON u.id = o.user_id",
        "sqlite",
        None,
        "SELECT o.created_at FROM orders o JOIN users u ON u.id = o.user_id",
    ),
    ("SELECT created FROM orders", "sqlite", None, "SELECT created_at FROM orders"),
    (
        "WITH big AS (SELECT user_id, SUM(totl) AS spent FROM orders GROUP BY user_id) "
        "SELECT b.spnt FROM big AS b",
        "sqlite",
        None,
        "WITH big AS (SELECT user_id, SUM(total) AS spent FROM orders GROUP BY user_id) "
        "SELECT b.spent FROM big AS b",
    ),
    (
        "UPDATE users SET usr_name = 'x' WHERE agee > 3",
        "sqlite",
        None,
        "UPDATE users SET user_name = 'x' WHERE age > 3",
    ),
    (
        "SELECT usr_name FROM users WHERE (age > 3",  # re-read, then repaired
        "sqlite",
        None,
        "SELECT user_name FROM users WHERE (age > 3)",
    ),
    # a table function hides which names exist, but the error names the culprit
    (
        "SELECT usr_name FROM users, json_each('[1, 2]')",
        "sqlite",
        "no such column: usr_name",
        "SELECT user_name FROM users, json_each('[1, 2]')",
    ),
    ('SELECT "User_Name" FROM users', "postgresql", None, 'SELECT "user_name" FROM users'),
    (
        "SELECT usr_name FROM users CROSS JOIN generate_series(1, 3)",
        "postgresql",
        'column "usr_name" does not exist',
        "SELECT user_name FROM users CROSS JOIN generate_series(1, 3)",
    ),
    ("SELECT [usr_name] FROM [userz]", "sqlserver", None, "SELECT [user_name] FROM [users]"),
    ("SELECT `usr_name` FROM users", "mysql", None, "SELECT `user_name` FROM users"),
    (
        "SELECT u.usr_name FROM users u",
        "mysql",
        "Unknown column 'u.usr_name' in 'field list'",
        "SELECT u.user_name FROM users u",
    ),
    ("SELECT totl FROM orderz", "duckdb", None, "SELECT total FROM orders"),
]


@pytest.mark.parametrize(("sql", "dialect", "error", "expected"), REPAIRS)
def test_repair_identifiers(sql: str, dialect: str, error: str | None, expected: str) -> None:
    fixed = repair_identifiers(sql, dialect, SCHEMA, error)
    assert fixed == expected
    assert parses(fixed, dialect)
    assert normalize_sql(fixed, dialect) != normalize_sql(sql, dialect)
    assert unknown_identifiers(fixed, dialect, SCHEMA) == []
    if dialect == "sqlite":
        assert sqlite_error(sql) is not None or error is not None
        assert sqlite_error(fixed) is None


def test_the_sqlite_error_names_what_repair_fixes() -> None:
    sql = "SELECT usr_name FROM users, json_each('[1, 2]')"
    error = sqlite_error(sql)
    assert error == "no such column: usr_name"
    assert repair_identifiers(sql, "sqlite", SCHEMA) is None  # the query alone cannot tell
    assert repair_identifiers(sql, "sqlite", SCHEMA, error) is not None


def test_names_needing_quotes_are_quoted_in_the_dialect() -> None:
    pg = {"Users": ["Id", "UserName"]}
    assert repair_identifiers("SELECT usrname FROM Users", "postgresql", pg) == (
        'SELECT "UserName" FROM "Users"'  # a bare Users is users in PostgreSQL
    )
    oracle = {"USERS": ["ID", "USER_NAME"]}
    assert repair_identifiers("SELECT usr_name FROM users", "oracle", oracle) == (
        "SELECT user_name FROM users"
    )
    assert repair_identifiers('SELECT "usr_name" FROM users', "oracle", oracle) == (
        'SELECT "USER_NAME" FROM users'
    )
    spaced = {"order details": ["order_id", "unit price"]}
    assert repair_identifiers("SELECT unit_price FROM [order details]", "sqlserver", spaced) == (
        "SELECT [unit price] FROM [order details]"
    )


def test_names_with_spaces_and_punctuation_keep_their_quotes() -> None:
    ddl = (
        'CREATE TABLE frpm (CDSCode TEXT, "Free Meal Count (K-12)" REAL, "Enrollment (K-12)" REAL)'
    )
    schema = {"frpm": ["CDSCode", "Free Meal Count (K-12)", "Enrollment (K-12)"]}
    sql = "SELECT `Free Meal Count (K12)` / `Enrollment (K-12)` FROM frpm WHERE CDSCode = '1'"
    fixed = repair_identifiers(sql, "sqlite", schema)
    assert fixed == (
        "SELECT `Free Meal Count (K-12)` / `Enrollment (K-12)` FROM frpm WHERE CDSCode = '1'"
    )
    db = sqlite3.connect(":memory:")
    db.execute(ddl)
    with pytest.raises(sqlite3.OperationalError, match="no such column"):
        db.execute(sql)
    assert db.execute(fixed).fetchall() == []
    db.close()


def test_schema_qualified_table_names_in_the_schema() -> None:
    schema = {"public.users": ["id", "user_name"], "sales.users": ["id", "region"]}
    assert unknown_identifiers("SELECT user_name FROM public.users", "postgresql", schema) == []
    assert repair_identifiers("SELECT regin FROM sales.users", "postgresql", schema) == (
        "SELECT region FROM sales.users"
    )
    assert repair_identifiers("SELECT user_name FROM public.userz", "postgresql", schema) == (
        "SELECT user_name FROM public.users"
    )


NO_REPAIR = [
    ("SELECT user_name FROM users", "sqlite", None),  # nothing unknown
    ("SELECT created FROM events", "sqlite", None),  # created_at or created_by? ambiguous
    ("SELECT total FROM users", "sqlite", None),  # only in another table: needs a join
    ("SELECT zzz FROM users", "sqlite", None),  # nothing near
    ("SELECT x.user_name FROM users AS u", "sqlite", None),  # no alias like x
    ("SELECT user_name FROM user_table_that_is_far", "sqlite", None),
    ("SELEC usr_name FROM users", "sqlite", None),  # unreadable
    ("SELECT user_name FROM users", "sqlite", "no such column: user_name"),  # exists
    ("SELECT usr_name FROM users", "sqlite", "no such table: nothing_here"),
]


@pytest.mark.parametrize(("sql", "dialect", "error"), NO_REPAIR)
def test_no_repair_when_nothing_clear(sql: str, dialect: str, error: str | None) -> None:
    if (sql, error) == ("SELECT usr_name FROM users", "no such table: nothing_here"):
        # an error about another name does not stop the clear repair of this one
        assert repair_identifiers(sql, dialect, SCHEMA, error) == "SELECT user_name FROM users"
        return
    assert repair_identifiers(sql, dialect, SCHEMA, error) is None


def test_ambiguous_names_are_described_but_not_replaced() -> None:
    names = unknown_identifiers("SELECT created FROM events", "sqlite", SCHEMA)
    assert names[0].nearest[:2] == ["created_at", "created_by"]
    assert repair_identifiers("SELECT created FROM events", "sqlite", SCHEMA) is None
    # the other, clear name of the same statement is still repaired
    both = "SELECT created, created_byy FROM events"
    assert repair_identifiers(both, "sqlite", SCHEMA) == "SELECT created, created_by FROM events"


def test_a_name_in_several_joined_tables_is_shown_qualified_and_not_replaced() -> None:
    sql = "SELECT crated_at FROM users u JOIN orders o ON o.user_id = u.id"
    assert unknown_identifiers(sql, "sqlite", SCHEMA) == [
        U(
            name="crated_at",
            kind="column",
            nearest=["o.created_at", "u.created_at", "events.created_at"],
        )
    ]
    # `created_at` alone would be ambiguous in SQLite too
    assert repair_identifiers(sql, "sqlite", SCHEMA) is None
    assert sqlite_error(sql.replace("crated_at", "created_at")) == (
        "ambiguous column name: created_at"
    )


def test_an_unknown_qualifier_is_matched_against_aliases_in_scope() -> None:
    # `users` is aliased `u`: `users.user_name` would fail, so it is no candidate
    aliased = "SELECT usr.user_name FROM users AS us"
    assert unknown_identifiers(aliased, "sqlite", SCHEMA) == [
        U(name="usr", kind="table", nearest=["us"])
    ]
    fixed = repair_identifiers(aliased, "sqlite", SCHEMA)
    assert fixed == "SELECT us.user_name FROM users AS us"
    assert sqlite_error(aliased) is not None
    assert sqlite_error(fixed) is None
    typo = "SELECT ordr.total FROM orders AS ordrs"
    assert repair_identifiers(typo, "sqlite", SCHEMA) == "SELECT ordrs.total FROM orders AS ordrs"
    assert sqlite_error(typo) is not None
    assert sqlite_error("SELECT ordrs.total FROM orders AS ordrs") is None


def test_a_database_error_settles_a_close_call() -> None:
    schema = {"people": ["id", "first_name", "last_name"]}
    sql = "SELECT fiast_name FROM people"
    names = unknown_identifiers(sql, "duckdb", schema)
    assert names[0].nearest == ["first_name", "last_name"]
    assert repair_identifiers(sql, "duckdb", schema) is None  # 0.90 vs 0.84: too close
    error = 'Binder Error: Referenced column "fiast_name" not found in FROM clause!'
    assert repair_identifiers(sql, "duckdb", schema, error) == "SELECT first_name FROM people"
    # an error about another column does not lower the bar for this one
    other = 'Binder Error: Referenced column "x" not found in FROM clause!'
    assert repair_identifiers(sql, "duckdb", schema, other) is None


# ------------------------------------------------------------ database errors

ERRORS = [
    ("no such column: usr_id", "column", "usr_id", None),
    ("no such column: u.usr_id", "column", "usr_id", "u"),
    ("no such table: main.userz", "table", "userz", None),
    ('column "usr_id" does not exist', "column", "usr_id", None),
    ("column u.usr_id does not exist\nLINE 1: SELECT u.usr_id FROM ...", "column", "usr_id", "u"),
    ('column "usr_id" of relation "users" does not exist', "column", "usr_id", None),
    ('relation "userz" does not exist', "table", "userz", None),
    ('relation "public.userz" does not exist', "table", "userz", None),
    ('missing FROM-clause entry for table "x"', "table", "x", None),
    ("(1054, \"Unknown column 'x' in 'field list'\")", "column", "x", None),
    ("Unknown column 'u.usr_id' in 'where clause'", "column", "usr_id", "u"),
    ("(1146, \"Table 'shop.userz' doesn't exist\")", "table", "userz", None),
    (
        'Binder Error: Referenced column "usr_id" not found in FROM clause!',
        "column",
        "usr_id",
        None,
    ),
    ('Binder Error: Table "u" does not have a column named "usr_id"', "column", "usr_id", None),
    ("Catalog Error: Table with name userz does not exist!", "table", "userz", None),
    ("Invalid column name 'usr_id'.", "column", "usr_id", None),
    ("Invalid object name 'dbo.userz'.", "table", "userz", None),
    ('ORA-00904: "U"."USR_ID": invalid identifier', "column", "USR_ID", "U"),
]


@pytest.mark.parametrize(("message", "kind", "name", "qualifier"), ERRORS)
def test_error_messages_name_the_identifier(
    message: str, kind: str, name: str, qualifier: str | None
) -> None:
    found = _error_identifier(message)
    assert found is not None
    assert (found.kind, found.name, found.qualifier) == (kind, name, qualifier)


@pytest.mark.parametrize(
    "message", ['near "FROM": syntax error', "division by zero", "permission denied", ""]
)
def test_other_errors_name_nothing(message: str) -> None:
    assert _error_identifier(message) is None


# --------------------------------------------------------------- describe_unknown


def test_describe_unknown_one_line_per_name() -> None:
    names = [
        U(name="usr_id", kind="column", table="users", nearest=["user_id", "orders.user_id"]),
        U(name="userz", kind="table", nearest=["users"]),
        U(name="zzz", kind="column"),
    ]
    assert describe_unknown(names).splitlines() == [
        'column "usr_id" (table users) does not exist; nearest: user_id, orders.user_id',
        'table "userz" does not exist; nearest: users',
        'column "zzz" does not exist; no similar name',
    ]
    assert describe_unknown([]) == ""


def test_describe_unknown_from_a_real_statement() -> None:
    names = unknown_identifiers("SELECT o.usr_id FROM orders o", "sqlite", SCHEMA)
    assert describe_unknown(names) == (
        'column "usr_id" (table orders) does not exist; nearest: user_id'
    )


# ---------------------------------------------------------- has_top_level_order_by

ORDER_CASES = [
    ("SELECT a FROM t ORDER BY a", "sqlite", True),
    ("SELECT a FROM t", "sqlite", False),
    ("SELECT a FROM (SELECT a FROM t ORDER BY a) AS s", "sqlite", False),
    ("SELECT a, ROW_NUMBER() OVER (ORDER BY a) FROM t", "postgresql", False),
    ("SELECT STRING_AGG(a, ',' ORDER BY a) FROM t", "postgresql", False),
    ("SELECT a FROM t UNION SELECT b FROM u ORDER BY 1", "sqlite", True),
    ("(SELECT a FROM t ORDER BY a)", "postgresql", True),
    ("WITH c AS (SELECT a FROM t ORDER BY a) SELECT a FROM c", "sqlite", False),
    ("WITH c AS (SELECT a FROM t) SELECT a FROM c ORDER BY a", "duckdb", True),
    ("SELECT TOP 3 a FROM t ORDER BY a DESC", "sqlserver", True),
    ("SELECT a FROM t ORDER BY a FETCH FIRST 3 ROWS ONLY", "oracle", True),
    ("SELECT a FROM t ORDER BY a LIMIT 3", "mysql", True),
    ("SELECT 1; SELECT a FROM t ORDER BY a", "sqlite", True),
    ("SELECT a FROM t ORDER BY a; SELECT 1", "sqlite", False),
    ("INSERT INTO x SELECT a FROM t ORDER BY a", "sqlite", False),
    ("SELECT a FROM t ORDER BY", "sqlite", False),  # does not parse
    ("", "sqlite", False),
]


@pytest.mark.parametrize(("sql", "dialect", "expected"), ORDER_CASES)
def test_has_top_level_order_by(sql: str, dialect: str, expected: bool) -> None:
    assert has_top_level_order_by(sql, dialect) is expected


# ---------------------------------------------------------------- robustness

NASTY: list[Any] = [
    "",
    ";;;",
    "SELECT",
    "SELECT (((((",
    "SELECT 'open",
    'SELECT "open',
    "/* open comment",
    "SELECT * FROM t WHERE a = $$x",
    "SELECT " + "(" * 300 + "1" + ")" * 300,
    "WITH a AS (SELECT * FROM a) SELECT * FROM a",
    "SELECT a.b.c.d.e FROM t",
    "CREATE PROCEDURE p AS BEGIN SELECT 1; END",
    "\x00\x01 SELECT",
]


@pytest.mark.parametrize(
    "dialect", ["sqlite", "postgresql", "mysql", "sqlserver", "oracle", "duckdb"]
)
@pytest.mark.parametrize("sql", NASTY)
def test_bad_sql_never_raises(sql: str, dialect: str) -> None:
    reparsed = reparse_in_dialect(sql, dialect)
    assert reparsed is None or parses(reparsed, dialect)
    assert isinstance(transpile_from_detected(sql, dialect), list)
    assert isinstance(unknown_identifiers(sql, dialect, SCHEMA), list)
    repaired = repair_identifiers(sql, dialect, SCHEMA, "no such column: b")
    assert repaired is None or parses(repaired, dialect)
    assert isinstance(has_top_level_order_by(sql, dialect), bool)


def test_an_unknown_dialect_is_a_configuration_error() -> None:
    with pytest.raises(ConfigError):
        reparse_in_dialect("SELECT 1", "cobol")
