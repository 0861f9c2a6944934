"""Issue 38 item 1: keyword typos, ambiguous columns, missing commas and names the engine
reserves repaired with zero LLM calls, and two slips in statements that run (rows that repeat,
a column written as an alias), on real engines (SQLite, DuckDB, and PostgreSQL when
ACTS_SQL_TEST_PG_URL is set).

Each case runs the broken statement on the engine, so the rule reads that engine's own error
text; `correct(..., method=maplerepair)` with an empty script (any LLM call would fail) must
return the repaired statement, its rows, and the rule's `rule_fired` event. The `acts` test
shows the repair of the user's SQL is a candidate of its own (origin `rule:<name>`) that the
evidence gate accepts together with the raw rewrite, in one call.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from acts_sql import CorrectionOptions, correct
from acts_sql.db.connect import open_database
from acts_sql.db.result import ExecResult
from acts_sql.sql.query_text import normalize_sql
from acts_sql.tools.rule_chain import RuleChain, schema_facts
from support import scripted

DDL = [
    "CREATE TABLE garages (gid INTEGER PRIMARY KEY, city VARCHAR(20))",
    "CREATE TABLE vans (vid INTEGER PRIMARY KEY, gid INTEGER REFERENCES garages(gid),"
    " plate VARCHAR(10), km INTEGER)",
    "INSERT INTO garages VALUES (1, 'Braga'), (2, 'Faro')",
    "INSERT INTO vans VALUES (1, 1, 'V-10', 120), (2, 1, 'V-11', 40), (3, 2, 'V-20', 300)",
    'CREATE TABLE "order" (oid INTEGER PRIMARY KEY, vid INTEGER, total INTEGER)',
    'INSERT INTO "order" VALUES (1, 1, 7), (2, 3, 2)',
]

CASES = [
    # id, broken statement, the rule that repairs it, the repaired statement's rows (sorted)
    ("form-were", "SELECT plate FORM vans WERE km > 100", "keyword_typo", [["V-10"], ["V-20"]]),
    (
        "jion-gropu-ordr",
        "SELECT city, COUNT(*) FROM garages g JION vans v ON g.gid = v.gid GROPU BY city"
        " ORDR BY city",
        "keyword_typo",
        [["Braga", 2], ["Faro", 1]],
    ),
    (
        "ambiguous-join-key",
        "SELECT gid, plate FROM garages g JOIN vans v ON g.gid = v.gid WHERE km < 200",
        "ambiguous_join_key",
        [[1, "V-10"], [1, "V-11"]],
    ),
    (
        "comma-before-count",
        "SELECT city COUNT(*) FROM garages g JOIN vans v ON g.gid = v.gid GROUP BY city",
        "missing_comma",
        [["Braga", 2], ["Faro", 1]],
    ),
    ("comma-three-columns", "SELECT plate km vid FROM vans WHERE vid = 3", "missing_comma",
     [["V-20", 300, 3]]),
    ("table-named-order", "SELECT o.oid, v.plate FROM order o JOIN vans v ON v.vid = o.vid"
     " ORDER BY o.oid", "reserved_name", [[1, "V-10"], [2, "V-20"]]),
]  # fmt: skip


def _sqlite(tmp_path: Path) -> str:
    path = tmp_path / "fleet.db"
    with sqlite3.connect(path) as conn:
        for statement in DDL:
            conn.execute(statement)
    return f"sqlite:///{path}"


def _duckdb(tmp_path: Path) -> str:
    duckdb = pytest.importorskip("duckdb")
    path = tmp_path / "fleet.duckdb"
    conn = duckdb.connect(str(path))
    for statement in DDL:
        conn.execute(statement)
    conn.close()
    return f"duckdb:///{path}"


def _postgresql(statements: list[str] = DDL) -> Iterator[str]:
    """A fresh database on the test server with `statements` run, dropped afterwards."""
    admin = os.environ.get("ACTS_SQL_TEST_PG_URL")
    if not admin:
        pytest.skip("ACTS_SQL_TEST_PG_URL is not set")
    name = f"acts_rules_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    url = admin.rsplit("/", 1)[0] + "/" + name
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            for statement in statements:
                conn.execute(statement)
        yield url
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(params=["sqlite", "duckdb", "postgresql"])
def fleet(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield _sqlite(tmp_path)
    elif request.param == "duckdb":
        yield _duckdb(tmp_path)
    else:
        yield from _postgresql()


def _rows(result) -> list[list]:
    return sorted([[int(v) if isinstance(v, int) else v for v in row] for row in result.rows])


@pytest.mark.parametrize(("sql", "rule", "rows"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_the_chain_repairs_it_on_each_engine_reading_its_own_error(fleet, sql, rule, rows):
    executor = open_database(fleet)
    broken = executor.execute(sql)
    assert not broken.ok  # the engine itself rejects it: the rule reads this error
    chain = RuleChain(executor, schema_facts(executor.reflect(), executor.dialect),
                      executor.dialect)  # fmt: skip
    state = chain.run(sql, broken)

    assert state.result.ok, [f.model_dump() for f in state.fired]
    assert rule in state.repaired_by
    assert _rows(state.result) == rows


@pytest.mark.parametrize(("sql", "rule", "rows"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_maplerepair_repairs_it_with_no_llm_call(fleet, sql, rule, rows):
    llm = scripted({})  # any LLM call would fail: the script is empty
    result = correct(fleet, "vans", sql, llm=llm, options=CorrectionOptions(method="maplerepair"))

    assert result.accepted is True and result.usage.llm_calls == 0 and llm.requests == []
    assert result.result is not None and _rows(result.result) == rows
    fired = [(e.data["rule"], e.data["status"]) for e in result.trace if e.kind == "rule_fired"]
    assert (rule, "repaired") in fired or (rule, "progress") in fired


def _ran(fleet: str, sql: str) -> tuple[RuleChain, ExecResult]:
    executor = open_database(fleet)
    ran = executor.execute(sql)
    assert ran.ok  # it runs: only the later stages read it
    chain = RuleChain(executor, schema_facts(executor.reflect(), executor.dialect),
                      executor.dialect)  # fmt: skip
    return chain, ran


def test_the_logic_stage_inserts_the_comma_of_a_column_written_as_an_alias(fleet):
    chain, ran = _ran(fleet, "SELECT plate km FROM vans WHERE vid = 3")
    state = chain.run("SELECT plate km FROM vans WHERE vid = 3", ran)

    assert state.repaired_by == ["column_alias"], [f.model_dump() for f in state.fired]
    assert _rows(state.result) == [["V-20", 300]]


def test_rows_that_repeat_get_distinct_as_a_guess_apart_from_the_chain(fleet):
    sql = "SELECT g.city FROM garages g JOIN vans v ON v.gid = g.gid ORDER BY g.city"
    chain, ran = _ran(fleet, sql)

    assert chain.run(sql, ran).repaired_by == []  # never applied on the chain's way
    guesses = chain.guesses(sql, ran)
    assert [g.repaired_by for g in guesses] == [["duplicate_rows"]]
    assert guesses[0].result.rows == [["Braga"], ["Faro"]]


def test_the_repair_of_a_keyword_typo_is_a_zero_call_candidate_of_acts(tmp_path: Path):
    """The rule chain's repair of the user's SQL costs no model call: a lexical repair, the
    evidence gate accepts it alone before any call; without the lexical rule it is a
    candidate (origin `rule:keyword_typo`) that agrees with the raw rewrite, one call;
    without the rules the same run needs a second call."""
    db = _sqlite(tmp_path)
    user = "SELECT plate FORM vans WERE km > 100"
    right = "SELECT plate FROM vans WHERE km > 100"
    raw = f"```sql\n{right}\n```"
    llm = scripted({"correct": [raw]})
    result = correct(db, "Vans over 100 km", user, llm=llm,
                     options=CorrectionOptions(candidates=3))  # fmt: skip

    assert result.accepted is True
    assert normalize_sql(result.sql, "sqlite") == normalize_sql(right, "sqlite")
    assert result.usage.llm_calls == 0 and llm.requests == []
    fired = [e for e in result.trace if e.kind == "rule_fired"]
    assert [(e.data["rule"], e.data["status"]) for e in fired] == [("keyword_typo", "repaired")]

    agreed = correct(db, "Vans over 100 km", user, llm=scripted({"correct": [raw]}),
                     options=CorrectionOptions(candidates=3, lexical_repairs=False))  # fmt: skip
    assert agreed.accepted is True and agreed.usage.llm_calls == 1
    (gate,) = [e for e in agreed.trace if e.kind == "evidence"]
    agreeing = {c["origin"] for c in gate.data.candidates if c["group"] == gate.data.group}
    assert agreeing == {"raw", "rule:keyword_typo"}

    off = correct(db, "Vans over 100 km", user, llm=scripted({"correct": [raw, raw]}),
                  options=CorrectionOptions(candidates=3, rule_candidates=False))  # fmt: skip
    assert off.usage.llm_calls == 2  # the raw rewrite alone needs a sample to agree with


def test_no_repair_when_the_fix_would_touch_a_schema_name(tmp_path: Path):
    """`wher` is a column here: never rewritten to WHERE, so only the LLM could help."""
    path = tmp_path / "odd.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes (id INTEGER, wher TEXT)")
        conn.execute("INSERT INTO notes VALUES (1, 'x')")
    llm = scripted({})
    result = correct(f"sqlite:///{path}", "notes", "SELECT id FROM notes wher id = 1", llm=llm,
                     options=CorrectionOptions(method="maplerepair"))  # fmt: skip
    fired = [e.data["rule"] for e in result.trace if e.kind == "rule_fired"]
    assert "keyword_typo" not in fired
    assert json.dumps(result.sql).count("wher") == 1


def test_a_mixed_case_postgresql_table_written_bare_gets_its_stored_name_quoted():
    """PostgreSQL folds the bare `Experiment` and `CL` to lower case, so neither is found;
    the names as the server stores them, quoted, with no LLM call (real reflection, the
    server's own error)."""
    table = [
        'CREATE TABLE "Experiment" (id INTEGER, "CL" REAL)',
        'INSERT INTO "Experiment" VALUES (1, 2.0), (2, 4.0)',
    ]
    with contextlib.contextmanager(_postgresql)(table) as url:
        llm = scripted({})
        result = correct(url, "the mean CL", "SELECT avg(CL) AS cl FROM Experiment", llm=llm,
                         options=CorrectionOptions(method="maplerepair"))  # fmt: skip
    assert result.accepted is True and result.usage.llm_calls == 0
    assert result.sql == 'SELECT avg("CL") AS cl FROM "Experiment"'
    assert result.result is not None and [list(r) for r in result.result.rows] == [[3.0]]


def test_a_duckdb_value_in_double_quotes_becomes_a_string(tmp_path: Path):
    """DuckDB reads `"Faro"` as a column and says "Referenced column ... not found"."""
    db = _duckdb(tmp_path)
    llm = scripted({})
    result = correct(db, "vans of the Faro garage",
                     'SELECT plate FROM vans v JOIN garages g ON g.gid = v.gid WHERE city = "Faro"',
                     llm=llm, options=CorrectionOptions(method="maplerepair"))  # fmt: skip
    assert result.accepted is True and result.usage.llm_calls == 0
    assert "'Faro'" in result.sql
    assert result.result is not None and [list(r) for r in result.result.rows] == [["V-20"]]
