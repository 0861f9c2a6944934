"""The certain rule (issue 38, items 1, 2 and 7): the user's SQL compares with NULL by `=`,
which holds for no row; when it fails, or runs and the issue says its rows are wrong, the rule
chain's repair (`IS NULL`) is accepted before any model call when the result checks let it
stand. Scripted LLM, real SQLite; each accepted case also runs with `lexical_repairs=False`,
which asks the model."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from acts_sql import CorrectionOptions, correct
from acts_sql.engine.evidence_rule import CERTAIN_RULE, EVIDENCE_NODE, EVIDENCE_RULE, is_certain
from acts_sql.sql.rules import CERTAIN_RULES, LEXICAL_RULES
from support import raw_reply as raw
from support import scripted


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = tmp_path / "library.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE loans (loan_id INTEGER PRIMARY KEY, book TEXT, returned TEXT)")
        conn.executemany(
            "INSERT INTO loans VALUES (?, ?, ?)",
            [(1, "Emma", "2024-01-03"), (2, "Emma", None), (3, "Dune", None), (4, "Ubik", "x")],
        )
    return str(path)


def kinds(result: Any, kind: str) -> list[Any]:
    return [e for e in result.trace if e.kind == kind]


OUT = "Which loans are still out (not returned)? Show the loan ids."
CERTAIN = [
    # id, the user's SQL, the rules that repair it
    ("= NULL, it runs", "SELECT loan_id FROM loans WHERE returned = NULL", "equals_null"),
    (
        "= NULL and a keyword typo: the statement fails",
        "SELEC loan_id FROM loans WHERE returned = NULL",
        "keyword_typo+equals_null",
    ),
]  # fmt: skip


@pytest.mark.parametrize("method", ["acts", "linear"])
@pytest.mark.parametrize(("users", "rules"), [c[1:] for c in CERTAIN], ids=[c[0] for c in CERTAIN])
def test_a_certain_repair_is_accepted_with_no_call(db, method, users, rules):
    llm = scripted({"correct": [raw("SELECT loan_id FROM loans WHERE returned IS NULL")]})
    result = correct(db, OUT, users, llm=llm, options=CorrectionOptions(method=method))

    assert result.accepted is True and result.usage.llm_calls == 0 and llm.requests == []
    assert sorted(r[0] for r in result.result.rows) == [2, 3]
    assert result.reason == f"accepted ({CERTAIN_RULE}), without a model call"
    (event,) = kinds(result, "evidence")
    assert event.data.rule == CERTAIN_RULE and event.data.accepted is True
    assert event.node == EVIDENCE_NODE
    assert [c["origin"] for c in event.data.candidates] == [f"rule:{rules}"]

    # without the rule the same run asks the model (a raw rewrite that agrees: 1 call)
    off = correct(
        db,
        OUT,
        users,
        llm=scripted({"correct": [raw(result.sql)]}),
        options=CorrectionOptions(method=method, lexical_repairs=False),
    )
    assert off.accepted is True and off.usage.llm_calls == 1
    assert off.reason.startswith(f"accepted ({EVIDENCE_RULE})")


NOT_ALONE = [
    # id, question, the user's SQL, options
    (
        "the issue says the rows are right (it is about speed)",
        "This query is too slow; make it faster. Which loans are still out?",
        "SELECT loan_id FROM loans WHERE returned = NULL",
        {},
    ),
    (
        "the repair returns the user's rows (no NULL among the rows it adds)",
        "Which loans of Ubik, or of no book, are there?",
        "SELECT loan_id FROM loans WHERE book = 'Ubik' OR book = NULL",
        {},
    ),
    (
        "a result check fails (one number asked, ids returned)",
        "How many loans are still out?",
        "SELECT loan_id FROM loans WHERE returned = NULL",
        {},
    ),
    ("the option is off", OUT, "SELECT loan_id FROM loans WHERE returned = NULL",
     {"lexical_repairs": False}),
    ("the gate is off", OUT, "SELECT loan_id FROM loans WHERE returned = NULL",
     {"evidence_gate": False}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("question", "users", "options"), [c[1:] for c in NOT_ALONE], ids=[c[0] for c in NOT_ALONE]
)
def test_the_certain_rule_does_not_accept_alone(db, question, users, options):
    llm = scripted({"correct": [raw("SELECT loan_id FROM loans")]})
    settings = CorrectionOptions(candidates=1, **options)
    result = correct(db, question, users, llm=llm, options=settings)

    assert result.usage.llm_calls >= 1 and llm.requests[0].purpose == "correct"
    assert all(e.data.rule != CERTAIN_RULE for e in kinds(result, "evidence"))
    assert "equals_null" in [e.data["rule"] for e in kinds(result, "rule_fired")]


@pytest.mark.parametrize(
    ("origin", "certain"),
    [
        ("rule:equals_null", True),
        ("rule:keyword_typo+equals_null", True),  # lexical rules beside it
        ("rule:keyword_typo", False),  # lexical alone: the lexical rule's
        ("rule:equals_null+integer_division", False),  # a guess beside it
        ("raw:rule:equals_null", False),  # a model's reply repaired
    ],
)
def test_is_certain_reads_the_rules_of_a_repair(origin, certain):
    assert is_certain(origin) is certain


def test_the_certain_rules_are_few_and_not_lexical():
    assert {"equals_null"} == CERTAIN_RULES
    assert not CERTAIN_RULES & LEXICAL_RULES
