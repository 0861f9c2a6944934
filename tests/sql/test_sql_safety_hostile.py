"""The read-only guard against issue 37's hostile corpus, the catalogs' unlisted functions
and PostgreSQL's `U&` escapes (pure: no database; the live effects are in
tests/integration/test_guard_effects.py).

Corpus: tests/fixtures/sql/safety/hostile.tsv (`<dialect> TAB <sql>`, all must be blocked).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from acts_sql.sql.dialects import get_dialect
from acts_sql.sql.safety import check_statement
from acts_sql.sql.safety_rules.escapes import EscapeError, decode_body, decode_unicode_escapes
from acts_sql.sql.safety_rules.functions import ALWAYS_BLOCKED, HARMLESS, generated
from hostile_corpus import Hostile, load_hostile

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sql" / "safety"
CASES = load_hostile()


def test_hostile_corpus_size() -> None:
    counts = Counter(case.dialect for case in CASES)
    assert len(CASES) >= 100
    assert counts["postgresql"] >= 50 and counts["duckdb"] >= 20 and counts["sqlite"] >= 3
    assert counts["mysql"] >= 40
    assert len({(c.dialect, c.sql) for c in CASES}) == len(CASES), "duplicate lines"


@pytest.mark.parametrize("case", CASES, ids=str)
def test_every_hostile_statement_is_blocked(case: Hostile) -> None:
    verdict = check_statement(case.sql, case.dialect)
    assert not verdict.allowed, case.sql
    assert verdict.reason and verdict.category


NOT_CALLABLE = {"show"}
"""DuckDB's SHOW is a keyword: `FROM show('x')` is a syntax error there (sqlglot reads a
table `show`), so it calls nothing."""


def _unlisted(dialect: str) -> list[str]:
    path = FIXTURES / f"{dialect}_unlisted.txt"
    names = path.read_text(encoding="utf-8").splitlines()
    skip = set(HARMLESS[dialect]) | NOT_CALLABLE
    return [n for n in names if n and not n.startswith("#") and n not in skip]


@pytest.mark.parametrize("dialect", ["postgresql", "duckdb"])
def test_every_catalog_function_off_the_lists_is_blocked(dialect: str) -> None:
    """However sqlglot maps a name (to a class of its own or not), a catalog function that
    is not on the allowlist or the reviewed list is blocked, as a call and as a table."""
    names = _unlisted(dialect)
    assert len(names) > 100
    passed = [
        sql
        for name in names
        for sql in (f"SELECT {name}(1, 2)", f"SELECT * FROM {name}('x')", f"SELECT {name}()")
        if check_statement(sql, dialect).allowed
    ]
    assert passed == []


@pytest.mark.parametrize("dialect", ["postgresql", "duckdb"])
def test_always_blocked_wins_over_the_generated_list_and_the_catalog(dialect: str) -> None:
    listed = generated(dialect) | set(HARMLESS[dialect])
    for name in sorted(listed):
        if any(entry.applies(name, dialect) for entry in ALWAYS_BLOCKED):
            verdict = check_statement(f"SELECT {name}(1)", dialect)
            assert not verdict.allowed, name
    extra = frozenset({"pg_read_file", "my_stable_fn"})
    sql = "SELECT my_stable_fn(1), pg_read_file('/etc/hostname')"
    assert not check_statement(sql, "postgresql", catalog_functions=extra).allowed
    assert check_statement("SELECT my_stable_fn(1)", "postgresql", catalog_functions=extra).allowed
    assert not check_statement("SELECT my_stable_fn(1)", "postgresql").allowed


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT lower(name), count(*), now(), random(), pg_sleep(0) FROM t GROUP BY 1",
        "SELECT pg_catalog.upper(x), coalesce(a, b), x::regclass FROM t",
        "SELECT * FROM generate_series(1, 3) AS g(n) WHERE n <> ALL (ARRAY[2])",
        "SELECT st_astext(st_makepoint(1, 2))",
        "SELECT U&'d\\0061t\\+000061' AS s, U&\"lowe\\0072\"('X')",
        "SELECT xmlelement(name a, xmlattributes(1 AS b)), grouping(x) FROM t GROUP BY ROLLUP (x)",
    ],
)
def test_ordinary_postgresql_reads_pass(sql: str) -> None:
    assert check_statement(sql, "postgresql").allowed, check_statement(sql, "postgresql").reason


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT list_transform([1, 2], x -> x + 1), strftime(now(), '%Y'), random()",
        "SELECT * FROM range(3), unnest([1, 2]), duckdb_tables(), pragma_table_info('t')",
        "SELECT a FROM t WHERE a GLOB 'x*' AND b <> ALL (SELECT 1)",
        "SELECT COLUMNS('a.*'), median(x), arg_max(a, b) FROM t QUALIFY row_number() OVER () = 1",
    ],
)
def test_ordinary_duckdb_reads_pass(sql: str) -> None:
    assert check_statement(sql, "duckdb").allowed, check_statement(sql, "duckdb").reason


def test_reason_names_the_function() -> None:
    verdict = check_statement('SELECT U&"pg_terminate_backen\\0064"(1)', "postgresql")
    assert verdict.category == "admin" and "pg_terminate_backend()" in (verdict.reason or "")
    verdict = check_statement("SELECT unheard_of(1)", "duckdb")
    assert verdict.category == "function" and "unheard_of()" in (verdict.reason or "")
    quoted = check_statement('SELECT "Lower_Case"(1)', "postgresql")
    assert "Lower_Case()" in (quoted.reason or "")


@pytest.mark.parametrize(
    ("body", "escape", "decoded"),
    [
        ("d\\0061t\\0061", "\\", "data"),
        ("\\+01F600", "\\", "\U0001f600"),
        ("\\D83D\\DE00", "\\", "\U0001f600"),
        ("a\\\\b", "\\", "a\\b"),
        ("d!0061t!!", "!", "dat!"),
        ("plain", "\\", "plain"),
    ],
)
def test_unicode_escapes_decode_as_postgresql_does(body: str, escape: str, decoded: str) -> None:
    assert decode_body(body, escape) == decoded


@pytest.mark.parametrize(
    "body", ["\\006", "\\0000", "\\D800", "\\DE00", "\\D83Dx", "\\+110000", "\\x041", "\\"]
)
def test_invalid_unicode_escapes_raise(body: str) -> None:
    with pytest.raises(EscapeError):
        decode_body(body)


def test_escaped_tokens_are_rewritten_in_place() -> None:
    pg = get_dialect("postgresql")
    text = "SELECT U&\"a\"\"\\0062\" /* U&\"\\0000\" */, U&'it''s \\0021' UESCAPE '\\', 'U&\"x\"'"
    assert decode_unicode_escapes(text, pg) == (
        'SELECT "a""b" /* U&"\\0000" */, \'it\'\'s !\', \'U&"x"\''
    )
    long_name = 'U&"' + "a" * 70 + '"(1)'
    assert decode_unicode_escapes(long_name, pg) == '"' + "a" * 63 + '"(1)'
    assert decode_unicode_escapes('SELECT U&"x"', get_dialect("duckdb")) == 'SELECT U&"x"'
