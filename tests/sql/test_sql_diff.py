"""token_diff: short, readable token-level diffs of two SQL texts."""

from __future__ import annotations

import pytest

from acts_sql.sql.sqldiff import ELLIPSIS, NO_CHANGE, token_diff

DIFFS = [
    # (before, after, dialect, expected)
    (
        "SELECT a FROM t WHERE x = 1",
        "SELECT a FROM t WHERE x > 1",
        "sqlite",
        "- WHERE x = 1 + WHERE x > 1",
    ),
    (
        "SELECT usr_id FROM users",
        "SELECT user_id FROM users",
        "postgresql",
        "- SELECT usr_id FROM users + SELECT user_id FROM users",
    ),
    (
        "SELECT a FROM t",
        "SELECT a FROM t WHERE b IN (SELECT c FROM u)",
        "sqlite",
        "- FROM t + FROM t WHERE b IN (SELECT c FROM u)",
    ),
    (
        "SELECT a, b, c, d, e, f, g FROM t WHERE x = 1 ORDER BY a",
        "SELECT a, b, c, d, e, f, gg FROM t WHERE x = 2 ORDER BY a DESC",
        "sqlite",
        f"- f, g FROM t + f, gg FROM t {ELLIPSIS} - x = 1 ORDER BY a + x = 2 ORDER BY a DESC",
    ),
    (
        "SELECT TOP 3 [name] FROM t",
        "SELECT TOP 5 [name] FROM t",
        "sqlserver",
        "- SELECT TOP 3 [name] FROM + SELECT TOP 5 [name] FROM",
    ),
    (
        "SELECT `name` FROM t WHERE s = 'a'",
        "SELECT `name` FROM t WHERE s = 'A'",
        "mysql",
        "- s = 'a' + s = 'A'",
    ),
    (
        "SELECT COALESCE(a, 0) FROM t",
        "SELECT COALESCE(a, 1) FROM t",
        "duckdb",
        "- a, 0) FROM + a, 1) FROM",
    ),
    ("", "SELECT 1", "sqlite", "- (nothing) + SELECT 1"),
    # text the tokenizer rejects falls back to words
    (
        "SELECT 'open FROM t",
        "SELECT 'open' FROM t",
        "oracle",
        "- SELECT 'open FROM t + SELECT 'open' FROM t",
    ),
]


@pytest.mark.parametrize(("before", "after", "dialect", "expected"), DIFFS)
def test_token_diff(before: str, after: str, dialect: str, expected: str) -> None:
    assert token_diff(before, after, dialect) == expected


@pytest.mark.parametrize(
    ("before", "after", "dialect"),
    [
        ("SELECT a FROM t", "SELECT a FROM t", "sqlite"),
        ("select a from t where x=1", "SELECT a\n  FROM t -- why\n WHERE x = 1", "postgresql"),
        ("SELECT Name FROM T", "SELECT name FROM t", "mysql"),  # unquoted names fold
        ("", "", "sqlite"),
    ],
)
def test_cosmetic_differences_are_no_change(before: str, after: str, dialect: str) -> None:
    assert token_diff(before, after, dialect) == NO_CHANGE


@pytest.mark.parametrize(
    ("before", "after", "dialect"),
    [
        ('SELECT "Name" FROM t', 'SELECT "name" FROM t', "postgresql"),  # quoted: exact
        ("SELECT 'Bob'", "SELECT 'bob'", "sqlite"),  # strings: exact
        ("SELECT 1.0", "SELECT 1.00", "duckdb"),  # numbers as written
    ],
)
def test_real_differences_are_shown(before: str, after: str, dialect: str) -> None:
    diff = token_diff(before, after, dialect)
    assert diff != NO_CHANGE
    assert diff.startswith("- ") and " + " in diff


def test_long_diffs_are_clipped_and_count_what_they_hide() -> None:
    before = " UNION ALL ".join(f"SELECT {i}" for i in range(100))
    after = " UNION ALL ".join(f"SELECT {i * 2 if i % 10 == 0 else i}" for i in range(100))
    diff = token_diff(before, after, "sqlite", max_chars=200)
    assert len(diff) <= 200
    assert diff.endswith("more)")
    assert "- ALL SELECT 10 UNION ALL + ALL SELECT 20 UNION ALL" in diff
    shown = diff.count(" + ")
    hidden = int(diff.rsplit("(+", 1)[1].split(" ")[0])
    assert shown + hidden == 9  # every tenth value but 0 changed


def test_one_huge_hunk_is_cut_in_the_middle() -> None:
    before = "SELECT " + ", ".join(f"c{i}" for i in range(200)) + " FROM t"
    after = "SELECT " + ", ".join(f"d{i}" for i in range(200)) + " FROM t"
    diff = token_diff(before, after, "sqlite", max_chars=120)
    assert len(diff) <= 120
    assert diff.startswith("- SELECT c0, c1")
    assert ELLIPSIS in diff
    assert "+ SELECT d0" in diff


@pytest.mark.parametrize("max_chars", [1, 5, 20, 60, 400])
def test_never_longer_than_asked(max_chars: int) -> None:
    diff = token_diff(
        "SELECT a FROM t WHERE x = 1", "SELECT b FROM u WHERE y = 2", "sqlite", max_chars
    )
    assert 0 < len(diff) <= max_chars


def test_context_is_configurable() -> None:
    before, after = "SELECT a FROM t WHERE x = 1 AND y = 2", "SELECT a FROM t WHERE x = 1 AND y = 3"
    assert token_diff(before, after, "sqlite", context=0) == "- 2 + 3"
    assert token_diff(before, after, "sqlite", context=4) == "- 1 AND y = 2 + 1 AND y = 3"


def test_very_long_texts_are_diffed_between_common_prefix_and_suffix() -> None:
    columns = [f"c{i}" for i in range(3000)]
    before = "SELECT " + ", ".join(columns) + " FROM t WHERE x = 1"
    after = before.replace("c1500,", "c1500 + 1,")
    assert token_diff(before, after, "sqlite") == "- , c1500, c1501 + , c1500 + 1, c1501"
    assert token_diff(before, before, "sqlite") == NO_CHANGE
