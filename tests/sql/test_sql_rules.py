"""Every repair rule against its fixture file (tests/fixtures/sql/rules/, see its README).

Table-driven, in the manner of sqlglot's optimizer tests: each case is a bad
statement, a schema, a dialect (and the database's error, sample data) with
the repaired statement the rule must give, or `-- unchanged` for correct SQL
the rule must leave alone, or `-- hint: TEXT`. With `dialect: sqlite` and
data, the rule's probes are answered on a real SQLite database built from the
case, and the repair must execute there.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from acts_sql.sql.query_text import normalize_sql
from acts_sql.sql.rules import RULES, ProbeAnswer, RuleInput, probes_of, rule_named, run_rule
from acts_sql.sql.schema_facts import from_ddl

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sql" / "rules"
UNCHANGED = "-- unchanged"
HINT = "-- hint:"


@dataclass
class Case:
    rule: str
    number: int
    keys: dict[str, str]
    sql: str
    expected: str
    comments: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.rule}-{self.number}"


def _blocks(text: str) -> list[list[str]]:
    blocks, current = [], []
    for line in text.splitlines():
        if line.strip():
            current.append(line.rstrip())
        elif current:
            blocks.append(current)
            current = []
    if current:
        blocks.append(current)
    return blocks


def load_cases(path: Path) -> list[Case]:
    defaults: dict[str, str] = {}
    cases = []
    for block in _blocks(path.read_text()):
        keys, comments, body = {}, [], []
        for line in block:
            if line.startswith("# ") and ":" in line and not body:
                key, _, value = line[2:].partition(":")
                if key.strip().replace("_", "").isalpha() and " " not in key.strip():
                    keys[key.strip()] = value.strip()
                    continue
            if line.startswith("#") and not body:
                comments.append(line)
                continue
            body.append(line)
        if comments and comments[0].strip() == "# defaults":
            defaults = keys
            continue
        assert len(body) == 2, f"{path.name}: a case is one statement and one outcome: {block}"
        sql, expected = body
        keys = {**defaults, **keys}
        if keys.get("newlines") == "escaped":  # the rule reads line breaks
            sql, expected = sql.replace("\\n", "\n"), expected.replace("\\n", "\n")
        cases.append(Case(path.stem, len(cases) + 1, keys, sql, expected, comments))
    return cases


CASES = [case for path in sorted(FIXTURES.glob("*.sql")) for case in load_cases(path)]


def _database(case: Case) -> sqlite3.Connection | None:
    if case.keys.get("dialect") != "sqlite" or "data" not in case.keys:
        return None
    conn = sqlite3.connect(":memory:")
    conn.executescript(case.keys.get("schema", "") + ";\n" + case.keys["data"])
    return conn


def _answer(conn: sqlite3.Connection, sql: str) -> ProbeAnswer:
    try:
        return ProbeAnswer(ok=True, rows=[list(r) for r in conn.execute(sql).fetchall()])
    except sqlite3.Error as exc:
        return ProbeAnswer(ok=False, error=str(exc))


def _fetched(conn: sqlite3.Connection | None, case: Case) -> list[list[object]] | None:
    """The statement's rows on the case's database, when it has one and the statement runs."""
    if conn is None or "error" in case.keys:
        return None
    answer = _answer(conn, case.sql.rstrip(";"))
    return answer.rows if answer.ok else None


def _given(case: Case, conn: sqlite3.Connection | None) -> RuleInput:
    dialect = case.keys.get("dialect", "sqlite")
    given = RuleInput(
        sql=case.sql.rstrip(";"),
        dialect=dialect,
        facts=from_ddl(case.keys.get("schema", ""), dialect),
        error=case.keys.get("error"),
        row_count=int(case.keys["rows"]) if "rows" in case.keys else None,
        rows=_fetched(conn, case),
        reference_sql=case.keys.get("reference"),
        answers={
            k.removeprefix("answer "): ProbeAnswer(ok=True, rows=json.loads(v))
            for k, v in case.keys.items()
            if k.startswith("answer ")
        },
    )
    rule = rule_named(case.rule)
    for _ in range(3):
        wanted = probes_of(rule, given) if conn is not None else []
        if not wanted:
            break
        answers = dict(given.answers)
        for probe in wanted:
            answers[probe.key] = _answer(conn, probe.sql)
        given = given.model_copy(update={"answers": answers})
    return given


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule_fixture(case: Case):
    conn = _database(case)
    given = _given(case, conn)
    outcome = run_rule(rule_named(case.rule), given)
    if case.expected == UNCHANGED:
        assert outcome is None, f"{case.comments} the rule should leave it alone: {outcome}"
        return
    if case.expected.startswith(HINT):
        wanted = case.expected.removeprefix(HINT).strip()
        assert outcome is not None and not outcome.repairs, outcome
        assert outcome.hint and wanted in outcome.hint, outcome.hint
        return
    assert outcome is not None and outcome.repairs, f"{case.comments} no repair for {case.sql}"
    got = outcome.repairs[0].sql
    d = given.dialect
    assert normalize_sql(got, d) == normalize_sql(case.expected.rstrip(";"), d), got
    if conn is not None:
        conn.execute(got)  # the repair runs on the case's database


def test_every_rule_has_a_fixture_file_that_leaves_correct_sql_alone():
    by_rule = {path.stem: load_cases(path) for path in FIXTURES.glob("*.sql")}
    assert sorted(by_rule) == sorted(rule.name for rule in RULES)
    for name, cases in by_rule.items():
        assert any(c.expected == UNCHANGED for c in cases), f"{name}: no case of correct SQL"
        assert any(c.expected != UNCHANGED for c in cases), f"{name}: no case it fires on"


def test_every_rule_says_which_error_it_fixes():
    for rule in RULES:
        assert rule.fixes(), rule.name
        module = __import__(type(rule).__module__, fromlist=["_"])
        assert module.__doc__ and len(module.__doc__.strip()) > 80, rule.name


def test_missing_cte_puts_back_the_users_text_as_written():
    """The user's definitions are copied, not re-generated: case, casts, comments kept."""
    user = (
        "with recursive Months(m) as materialized (\n"
        "  select date '2023-01-01'  -- first month\n"
        "  union all select (m + interval '1 month')::date from Months where m < '2023-03-01'\n"
        "), counted as (select m, 1 as n from Months)\n"
        "select * from counted"
    )
    given = RuleInput(
        sql="SELECT m, n FROM counted WHERE n > 0",
        dialect="postgresql",
        error='relation "counted" does not exist',
        reference_sql=user,
    )
    outcome = run_rule(rule_named("missing_cte"), given)
    assert outcome is not None
    written = outcome.repairs[0].sql
    start = user.index("Months(m)")
    end = user.index("from Months)") + len("from Months)")
    assert written == "WITH RECURSIVE " + user[start:end].replace("), counted", "),\ncounted") + (
        "\nSELECT m, n FROM counted WHERE n > 0"
    )
    assert "counted" in outcome.repairs[0].detail and "Months" in outcome.repairs[0].detail


def test_catalog_views_on_sqlite_list_what_the_standard_views_would():
    conn = sqlite3.connect(":memory:")
    conn.executescript(
        "CREATE TABLE required_tables (table_name TEXT); CREATE TABLE cards (id INTEGER NOT NULL,"
        " name TEXT); INSERT INTO required_tables VALUES ('cards'), ('prices');"
    )
    asked = {
        "SELECT t1.table_name FROM required_tables AS t1 LEFT JOIN information_schema.tables AS t2"
        " ON t1.table_name = t2.table_name WHERE t2.table_name IS NULL": [("prices",)],
        "SELECT column_name, is_nullable FROM information_schema.columns"
        " WHERE table_name = 'cards' ORDER BY ordinal_position": [("id", "NO"), ("name", "YES")],
    }
    for sql, rows in asked.items():
        given = RuleInput(sql=sql, dialect="sqlite", error="no such table: information_schema.x")
        outcome = run_rule(rule_named("catalog_views"), given)
        assert outcome is not None
        assert conn.execute(outcome.repairs[0].sql).fetchall() == rows
