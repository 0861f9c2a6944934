"""The lexical rule (issue 38, items 1 and 7): SQL that fails, repaired by lexical rules alone
(a keyword's or a name's spelling, quotes, a comma), is accepted before any model call when
the result checks let it stand. Scripted LLM, real SQLite: each accepted case also runs with
`lexical_repairs=False`, which asks the model; each refused case shows what stops the rule."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from acts_sql import CorrectionOptions, correct
from acts_sql.db.result import ExecResult
from acts_sql.engine.evidence_rule import (
    EVIDENCE_NODE,
    LEXICAL_RULE,
    Evidence,
    is_lexical,
    repair_verdict,
)
from acts_sql.sql.rules import LEXICAL_RULES, RULES
from support import raw_reply as raw
from support import scripted


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = tmp_path / "shop.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, city TEXT)")
        conn.executemany(
            "INSERT INTO customers VALUES (?, ?, ?)",
            [(1, "ann", "Oslo"), (2, "bob", "Paris"), (3, "cy", "Oslo")],
        )
        conn.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER)")
        conn.executemany("INSERT INTO orders VALUES (?, ?)", [(1, 1), (2, 1), (3, 2)])
    return str(path)


def kinds(result: Any, kind: str) -> list[Any]:
    return [e for e in result.trace if e.kind == kind]


OSLO = "List the names and cities of the customers who live in Oslo."

WHERE = " FROM customers WHERE city = 'Oslo'"
REPAIRED = [
    # id, question, the user's SQL, the rule that repairs it
    ("keyword typo", OSLO, "SELEC name, city" + WHERE, "keyword_typo"),
    ("misspelled column", OSLO, "SELECT nme, city" + WHERE, "unknown_identifier"),
    (
        "wrong table name",
        OSLO,
        "SELECT name, city" + WHERE.replace("customers", "customer"),
        "unknown_identifier",
    ),
    ("missing comma", OSLO, "SELECT name city COUNT(*) OVER ()" + WHERE, "missing_comma"),
    (
        "an ambiguous column the inner join equates",
        OSLO,
        "SELECT name, id, city"
        + WHERE.replace(" WHERE", " JOIN orders ON orders.id = customers.id WHERE"),
        "ambiguous_join_key",
    ),
    (
        "a value in identifier quotes",
        OSLO,
        "SELECT name, city" + WHERE.replace("'", "`"),
        "quoted_value",
    ),
]


@pytest.mark.parametrize("method", ["acts", "linear"])
@pytest.mark.parametrize(
    ("question", "users", "rule"), [c[1:] for c in REPAIRED], ids=[c[0] for c in REPAIRED]
)
def test_a_lexical_repair_of_failing_sql_is_accepted_with_no_call(
    db, method, question, users, rule
):
    llm = scripted({"correct": [raw("SELECT name, city FROM customers WHERE city = 'Oslo'")]})
    result = correct(db, question, users, llm=llm, options=CorrectionOptions(method=method))

    assert result.accepted is True and result.usage.llm_calls == 0 and llm.requests == []
    assert sorted(r[0] for r in result.result.rows) == ["ann", "cy"]
    assert result.reason == f"accepted ({LEXICAL_RULE}), without a model call"
    (event,) = kinds(result, "evidence")
    assert event.data.rule == LEXICAL_RULE and event.data.accepted is True
    assert event.node == EVIDENCE_NODE
    assert [c["origin"] for c in event.data.candidates] == [f"rule:{rule}"]
    assert not kinds(result, "plan") and result.tree == []

    # without the lexical rule the same run asks the model (a raw rewrite that agrees: 1 call)
    off = correct(
        db,
        question,
        users,
        llm=scripted({"correct": [raw(result.sql)]}),
        options=CorrectionOptions(method=method, lexical_repairs=False),
    )
    assert off.accepted is True and off.usage.llm_calls == 1
    assert off.reason.startswith("accepted (evidence: agreement)")


def test_a_function_the_guard_blocks_is_a_failure_a_lexical_repair_may_fix(tmp_path):
    """DuckDB: the read-only guard blocks `julianday` (no function it knows); the user's SQL
    never ran, and `dialect_functions` writes it in DuckDB's words: accepted with no call."""
    duckdb = pytest.importorskip("duckdb")
    path = str(tmp_path / "loans.duckdb")
    with duckdb.connect(path) as conn:
        conn.execute("CREATE TABLE loans (loan_id INTEGER, loaned_on DATE, returned_on DATE)")
        conn.execute(
            "INSERT INTO loans VALUES (1, '2024-01-01', '2024-01-15'), (2, '2024-02-01', "
            "'2024-02-03')"
        )
    users = "SELECT loan_id, julianday(returned_on) - julianday(loaned_on) AS days FROM loans"
    question = "How many days was each loan out? Show the loan id and the days."
    result = correct(path, question, users, llm=scripted({"correct": []}))

    assert [e.data["status"] for e in kinds(result, "statement")][:1] == ["blocked"]
    assert result.accepted is True and result.usage.llm_calls == 0
    assert result.result.rows == [[1, 14.0], [2, 2.0]]
    assert [c["origin"] for c in kinds(result, "evidence")[0].data.candidates] == [
        "rule:dialect_functions"
    ]


def _first_call(db: str, question: str, users: str, **options: Any) -> Any:
    """A run whose model answers the raw prompt once and cannot plan: how far the run got
    before its first call tells whether the lexical rule accepted."""
    llm = scripted({"correct": [raw("SELECT name FROM customers")]})
    options = {"candidates": 1, **options}
    return correct(db, question, users, llm=llm, options=CorrectionOptions(**options)), llm


NOT_ALONE = [
    # id, question, the user's SQL, why the rule does not accept
    (
        "a repair that is not lexical (the join does not equate id: ambiguous_column guesses)",
        "List the customer id of every order.",
        "SELECT id FROM customers JOIN orders ON orders.customer_id = customers.id",
        "ambiguous_column",
    ),
    (
        "a lexical repair whose rows fail a result check (one number asked, a list returned)",
        "How many customers live in Oslo?",
        "SELEC name FROM customers WHERE city = 'Oslo'",
        "keyword_typo",
    ),
    (
        "the user's SQL runs: a slip, not a lexical error",
        OSLO,
        "SELECT name, city FROM customers WHERE city = 'Paris'",
        None,
    ),
]


@pytest.mark.parametrize(
    ("question", "users", "rule"), [c[1:] for c in NOT_ALONE], ids=[c[0] for c in NOT_ALONE]
)
def test_the_lexical_rule_does_not_accept_alone(db, question, users, rule):
    result, llm = _first_call(db, question, users)
    assert result.usage.llm_calls >= 1 and llm.requests[0].purpose == "correct"
    assert all(e.data.rule != LEXICAL_RULE for e in kinds(result, "evidence"))
    fired = [e.data["rule"] for e in kinds(result, "rule_fired")]
    assert (rule in fired) if rule else not fired


def test_the_gate_switched_off_switches_the_lexical_rule_off(db):
    result, _ = _first_call(db, OSLO, REPAIRED[0][2], evidence_gate=False)
    assert result.usage.llm_calls >= 1 and not kinds(result, "evidence")


@pytest.mark.parametrize(
    ("origin", "lexical"),
    [
        ("rule:keyword_typo", True),
        ("rule:foreign_quotes+unknown_identifier", True),
        ("rule:unknown_identifier+group_by_columns", False),  # one guess among the rules
        ("rule:reparse", False),
        ("raw:rule:keyword_typo", False),  # a model's reply repaired: the model's reading
        ("raw", False),
    ],
)
def test_is_lexical_reads_the_rules_of_a_repair(origin, lexical):
    assert is_lexical(origin) is lexical


def test_the_rules_that_guess_at_meaning_are_not_lexical():
    stages = {rule.name: rule.stage.value for rule in RULES}
    assert {name for name, stage in stages.items() if stage == "syntax"} >= LEXICAL_RULES
    assert not {"group_by_columns", "reparse", "transpile_dialect", "ambiguous_column"} & (
        LEXICAL_RULES
    )


def _evidence(rows: list[list[Any]], **fields: Any) -> Evidence:
    result = ExecResult(status="ok", columns=["name"], rows=rows, row_count=len(rows))
    return Evidence(origin="rule:keyword_typo", sql="SELECT name FROM t", result=result,
                    fingerprint="f1", **fields)  # fmt: skip


def test_the_verdict_wants_a_result_that_may_stand():
    listed = _evidence([["ann"], ["cy"]])
    assert repair_verdict(listed, question=OSLO, named=None).accepted is True
    counted = repair_verdict(listed, question="How many customers are there?", named=None)
    assert counted.accepted is False and "a result check fails" in counted.reason
    refused = repair_verdict(_evidence([["ann"]], refusal="the user's rows"), question=OSLO,
                              named=None)  # fmt: skip
    assert refused.accepted is False and "the user's rows" in refused.reason
