"""The rule chain on a real SQLite database, and the rules serving acts (pools, repairs)."""

from __future__ import annotations

import sqlite3

import pytest

from acts_sql import correct
from acts_sql.db.connect import open_database
from acts_sql.prompts.context import TaskContext
from acts_sql.tools.base import PoolSettings, ToolCall, ToolEnv
from acts_sql.tools.registry import run_tool, tool_list
from acts_sql.tools.rule_chain import RuleChain, schema_facts
from support import scripted

DDL = """
CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT, country TEXT, joined TEXT);
CREATE TABLE orders (id INTEGER PRIMARY KEY, user_id INTEGER REFERENCES users(id), total REAL);
INSERT INTO users VALUES (1, 'Ann', 'USA', '2021-03-05'), (2, 'Bob', 'France', '2020-01-01'),
                         (3, NULL, 'USA', NULL);
INSERT INTO orders VALUES (1, 1, 10.5), (2, 1, 20), (3, 2, 5);
"""


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "shop.db"
    conn = sqlite3.connect(path)
    conn.executescript(DDL)
    conn.commit()
    conn.close()
    return f"sqlite:///{path}"


class Counting:
    def __init__(self, inner):
        self.inner, self.dialect, self.statements = inner, inner.dialect, []

    def execute(self, sql, *, max_rows=None, timeout=None, **_):
        self.statements.append(sql)
        return self.inner.execute(sql, max_rows=max_rows, timeout=timeout)

    def scratch(self):
        return self.inner.scratch()

    def reflect(self, sample_rows=3):
        return self.inner.reflect(sample_rows)


def chain_on(url):
    executor = Counting(open_database(url))
    fired = []
    chain = RuleChain(
        executor, schema_facts(executor.reflect(), "sqlite"), "sqlite", on_fire=fired.append
    )
    return chain, executor, fired


def test_two_errors_in_one_statement_are_fixed_in_rounds(db):
    chain, executor, fired = chain_on(db)
    sql = "SELECT nmae FROM users WHERE YEAR(joined) = 2021"
    state = chain.run(sql, executor.execute(sql))

    assert state.result.ok and state.result.rows == [["Ann"]]
    assert state.repaired_by == ["unknown_identifier", "dialect_functions"]
    assert [f.status for f in fired if f.rule == "unknown_identifier"] == ["progress"]
    assert (
        state.sql == "SELECT name FROM users WHERE CAST(STRFTIME('%Y', joined) AS INTEGER) = 2021"
    )


def test_later_stages_run_once_the_statement_runs_and_probe_the_data(db):
    chain, executor, fired = chain_on(db)
    sql = "SELECT name FROM users WHERE country = 'usa' AND name = NULL"
    state = chain.run(sql, executor.execute(sql))

    assert state.repaired_by == ["equals_null", "unknown_value"]
    assert [f.stage for f in fired if f.status == "repaired"] == ["logic", "convention"]
    assert "country = 'USA'" in state.sql and "name IS NULL" in state.sql
    probes = [s for s in executor.statements if "`users`" in s]
    assert any("LOWER(TRIM(`country`))" in p for p in probes)  # the case-insensitive probe


def test_what_no_rule_fixes_comes_back_with_the_error_as_a_hint(db):
    chain, executor, _ = chain_on(db)
    sql = "SELECT no_such_fn(name) FROM users"
    state = chain.run(sql, executor.execute(sql))

    assert not state.result.ok and state.sql == sql
    assert state.hints == [
        (
            "execution_failure",
            "The statement fails to execute. The database says: no such function: no_such_fn",
        )
    ]


def test_a_statement_the_rules_leave_alone_costs_only_their_probes(db):
    chain, executor, fired = chain_on(db)
    sql = "SELECT u.name, o.total FROM users AS u JOIN orders AS o ON o.user_id = u.id"
    state = chain.run(sql, executor.execute(sql))

    assert state.sql == sql and state.repaired_by == [] and fired == []
    assert len(executor.statements) == 1  # nothing to probe: no literal, no sort, no text rank


def _tool_env(url, script, *, rules=True):
    executor = open_database(url)
    tables = executor.reflect()
    task = TaskContext(
        dialect="sqlite",
        question="names",
        original_sql="SELECT 1",
        schema_text="-",
        schema_names={t.name: [c.name for c in t.columns] for t in tables},
        schema_facts=schema_facts(tables, "sqlite"),
        tool_list=tool_list(),
    )
    llm = scripted(script)
    return ToolEnv(executor=executor, llm=llm, task=task, pool=PoolSettings(rules=rules)), llm


def test_split_fix_syntax_repairs_a_mechanical_error_with_no_llm_call(db):
    env, llm = _tool_env(db, {})
    call = ToolCall(node_id="n1", input={"sql": "SELECT nmae FROM users WHERE name = NULL"})
    outcome = run_tool("split_fix_syntax", env, call)

    assert outcome.status == "done" and llm.requests == []
    (only,) = outcome.candidates
    assert only.origin == "rule:unknown_identifier" and only.result.ok
    assert outcome.output.dump()["repaired_by_rules"] == ["unknown_identifier"]
    assert "no LLM call" in outcome.summary


def test_split_fix_syntax_without_rules_asks_the_llm(db):
    repaired = '{"sql": "SELECT name FROM users"}'
    env, llm = _tool_env(db, {"fix_syntax": [repaired]}, rules=False)
    call = ToolCall(node_id="n1", input={"sql": "SELECT nmae FROM users"})
    outcome = run_tool("split_fix_syntax", env, call)

    assert [r.purpose for r in llm.requests] == ["fix_syntax"]  # sqlglot decomposed it
    assert outcome.candidates[0].origin == "greedy"


def test_acts_gets_the_rule_repair_of_the_users_sql_in_its_first_pool(db):
    user = "SELECT name FROM users WHERE joined = NULL"
    plan = {
        "cursor": "n1",
        "nodes": [
            {
                "id": "n1",
                "description": "rewrite",
                "tool": "generate_sql",
                "input": {},
                "children": [],
            }
        ],
    }
    script = {
        "correct": [f"```sql\n{user}\n```"],  # the raw rewrite repeats the user's SQL
        "plan": [plan],
        # the greedy answer repeats the user's SQL, and so does the retry it is asked for
        "generate_sql": [{"sql": user, "rationale": "same"}] * 2,
        "judge": [
            {
                "reason": "the rows without a date",
                "verdict": "accept",
                "group": "A",
                "backtrack_to": None,
            }
        ],
    }
    result = correct(db, "Who has no join date?", user, llm=scripted(script))

    assert result.accepted is True
    assert result.sql == "SELECT name FROM users WHERE joined IS NULL"
    assert result.result.rows == [[None]]
    winner = next(c for c in result.candidates if c["verdict"] == "accepted")
    assert winner["origin"] == "rule:equals_null"
    assert any(e.kind == "rule_fired" and e.data["rule"] == "equals_null" for e in result.trace)
