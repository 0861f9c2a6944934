"""Guesses of the rules that do not compose, at the evidence gate (issue 38, items 1 and 2): a
column a GROUP BY that SQLite ran left out (`bare_columns`), a join off the one foreign key that
links two tables (`foreign_key_join`). Each is a candidate of the user's SQL as given, an anchor
of the gate: a raw rewrite that agrees with it is accepted at 1 call, with no sample (without
the guess the scripted model, which has no sample to give, would fail the run); one the model's
candidates contradict is not accepted alone. Scripted LLM, real SQLite."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from acts_sql import CorrectionOptions, correct
from acts_sql.engine.evidence_rule import EVIDENCE_RULE
from support import raw_reply as raw
from support import scripted


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = tmp_path / "firm.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript(
            """
            CREATE TABLE employees (emp_id INTEGER PRIMARY KEY, dept_id INT, title TEXT);
            INSERT INTO employees VALUES (1, 10, 'Engineer'), (2, 10, 'Engineer'), (3, 10, 'CTO'),
                (4, 20, 'Sales');
            CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT);
            INSERT INTO customers VALUES (1, 'Ann'), (2, 'Bob'), (3, 'Cy');
            CREATE TABLE orders (id INTEGER PRIMARY KEY,
                customer_id INTEGER REFERENCES customers(id));
            INSERT INTO orders VALUES (1, 2), (2, 2), (3, 1);
            """
        )
    return str(path)


def kinds(result: Any, kind: str) -> list[Any]:
    return [e for e in result.trace if e.kind == kind]


GUESSES = [
    # id, question, the user's SQL, the SQL meant (the raw rewrite's), the rule
    (
        "a column the GROUP BY left out",
        "How many people hold each job title in each department? I get too few rows.",
        "SELECT dept_id, title, COUNT(*) AS people FROM employees GROUP BY dept_id",
        "SELECT dept_id, title, COUNT(*) AS people FROM employees GROUP BY dept_id, title",
        "bare_columns",
    ),
    (
        "a join off the foreign key",
        "Show every order id with the name of the customer who placed it.",
        "SELECT o.id, c.name FROM orders o JOIN customers c ON c.id = o.id",
        "SELECT o.id, c.name FROM orders o JOIN customers c ON c.id = o.customer_id",
        "foreign_key_join",
    ),
]


@pytest.mark.parametrize(
    ("question", "users", "meant", "rule"), [c[1:] for c in GUESSES], ids=[c[0] for c in GUESSES]
)
def test_a_guess_confirms_the_raw_rewrite(db, question, users, meant, rule):
    llm = scripted({"correct": [raw(meant)]})
    result = correct(db, question, users, llm=llm, options=CorrectionOptions(candidates=3))

    assert result.accepted is True and result.usage.llm_calls == 1
    assert result.reason == f"accepted ({EVIDENCE_RULE}), without a plan"
    (event,) = kinds(result, "evidence")
    assert {c["origin"] for c in event.data.candidates} == {"raw", f"rule:{rule}"}
    fired = [e.data["rule"] for e in kinds(result, "rule_fired")]
    assert rule in fired


@pytest.mark.parametrize(
    ("question", "users", "meant", "rule"), [c[1:] for c in GUESSES], ids=[c[0] for c in GUESSES]
)
def test_a_guess_the_model_contradicts_is_not_accepted_alone(db, question, users, meant, rule):
    others = [
        "SELECT title, COUNT(*) AS n FROM employees GROUP BY title",
        "SELECT dept_id, COUNT(*) AS n FROM employees GROUP BY dept_id",
        "SELECT name FROM customers",
    ]
    llm = scripted({"correct": [raw(sql) for sql in others]})
    result = correct(db, question, users, llm=llm, options=CorrectionOptions(candidates=3))

    first = kinds(result, "evidence")[0]
    assert first.data.accepted is False
    assert f"rule:{rule}" in {c["origin"] for c in first.data.candidates}
    assert result.usage.llm_calls == 3 and result.accepted is False
