"""Correcting PRQL end to end: scripted LLM, a real DuckDB database, the real compiler.

The user's PRQL and every candidate are compiled to DuckDB SQL and run; the
compiler's errors (line, column, message) are the execution feedback; the
answer comes back in PRQL; the trust rules hold for PRQL's canonical form (the
SQL it compiles to).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from acts_sql import Budget, CorrectionOptions, correct
from acts_sql.cli.render import progress_line
from acts_sql.engine.tree import PlanValidationError, check_plan
from acts_sql.protocol import Plan
from acts_sql.sql.languages import unavailable_tools
from support import duckdb_table, scripted

ROWS = [
    (1, "checkout", 200, 120.0),
    (2, "checkout", 503, 3000.0),
    (3, "checkout", 500, 2500.0),
    (4, "search", 200, 40.0),
    (5, "search", 502, 900.0),
    (6, "search", 200, 35.0),
    (7, "auth", 404, 15.0),
]
QUESTION = "How many server errors (HTTP 5xx) did each service have?"
TYPO = "from requests\nfiltr status >= 500\ngroup {service} (aggregate {errors = count this})"
RIGHT = "from requests\nfilter status >= 500\ngroup {service} (aggregate {errors = count this})"
RIGHT_ROWS = {("checkout", 2), ("search", 1)}
COUNTS_ALL = "from requests\ngroup {service} (aggregate {errors = count this})"
GENERATE_ONLY = {"cursor": "n1", "nodes": [{"id": "n1", "tool": "generate_sql"}]}


@pytest.fixture
def logs_db(tmp_path: Path) -> str:
    return duckdb_table(
        tmp_path / "logs.duckdb",
        "CREATE TABLE requests (request_id INTEGER PRIMARY KEY, service VARCHAR, "
        "status INTEGER, latency_ms DOUBLE)",
        ROWS,
    )


def raw(text: str) -> str:
    return f"The corrected query:\n```prql\n{text}\n```"


def gen(text: str) -> dict[str, str]:
    return {"sql": text, "rationale": "scripted"}


def accept(reason: str = "it does what the issue asks") -> dict:
    return {"reason": reason, "verdict": "accept", "group": "A", "backtrack_to": None}


def correct_typo_by_tree(logs_db, llm):
    """The typo corrected with the whole budget: the tree (plan, tools, judge) is under test,
    so no scaled budget may stop at the lone raw rewrite."""
    options = CorrectionOptions(scaled_budget=False)
    return correct(logs_db, QUESTION, TYPO, language="prql", llm=llm, options=options)


def rows(result) -> set[tuple]:
    return {tuple(r) for r in result.result.rows}


def test_an_unknown_transform_is_corrected_from_the_compilers_error(logs_db):
    llm = scripted(
        {
            "correct": [raw(RIGHT)],
            "plan": [GENERATE_ONLY],
            "generate_sql": [gen(RIGHT)],
            "judge": [accept()],
        }
    )
    result = correct_typo_by_tree(logs_db, llm)

    assert result.accepted is True
    assert result.sql == RIGHT  # the answer is PRQL, as the model wrote it
    assert result.dialect == "prql"
    assert rows(result) == RIGHT_ROWS
    error = "PRQL compile error: line 2, column 1: Unknown name `filtr`"
    original = next(e for e in result.trace if e.kind == "statement" and e.purpose == "original")
    assert error in original.data["error"]
    [generate] = llm.prompts("generate_sql")
    assert f"Its execution result:\nerror: {error}" in generate  # the feedback the model saw
    assert "Query language: PRQL" in generate and "compiles it to DuckDB SQL" in generate
    assert "Tool split_fix_syntax is not available for PRQL" in generate
    assert "`filtr`, `where`, `order by`" in generate  # the reference text
    [raw_prompt] = llm.prompts("correct")
    assert "You are an expert in PRQL" in raw_prompt and error not in raw_prompt
    [plan] = llm.prompts("plan")
    tools = plan.split("Available tools: ")[1].split(".\n")[0]
    assert "split_fix_syntax" not in tools and "generate_sql" in tools


def test_a_candidate_that_does_not_compile_is_repaired_by_a_step_told_the_error(logs_db):
    broken = "from requests\nfilter status >= 500\ngroup {service} (aggregate {errors = count})"
    llm = scripted(
        {
            "correct": [raw(broken)],
            "plan": [GENERATE_ONLY],
            "generate_sql": [gen(broken + "\ntake 10"), gen(RIGHT)],
            "judge": [accept()],
        }
    )
    result = correct_typo_by_tree(logs_db, llm)

    assert result.accepted is True and rows(result) == RIGHT_ROWS
    [fix] = [e for e in result.trace if e.kind == "fix_inserted"]
    repair = next(n for n in result.tree if n["id"] == fix.data["child"])
    assert repair["tool"] == "generate_sql" and "repair_of" in repair["input"]
    assert not [n for n in result.tree if n["tool"] == "split_fix_syntax"]
    second = llm.prompts("generate_sql")[1]
    assert "This candidate fails: from requests filter status >= 500" in second
    assert "PRQL compile error: line 3, column" in second  # the compiler's position


def test_the_users_query_reformatted_is_never_accepted(logs_db):
    """The canonical form of PRQL is the SQL it compiles to: new lines, comments and a
    merged `filter` do not make the user's query another one."""
    user = (
        "from requests\nfilter status >= 500\nfilter latency_ms > 1000\naggregate {n = count this}"
    )
    same_query = (
        "from requests  # the log\nfilter (status >= 500 && latency_ms > 1000)\n"
        "aggregate {n = count this}"
    )
    llm = scripted(
        {
            "correct": [raw(same_query)],
            "plan": [GENERATE_ONLY, GENERATE_ONLY],
            "generate_sql": [gen(same_query)] * 6,
            "judge": [accept()] * 6,
        }
    )
    result = correct(
        logs_db,
        "Count the slow server errors per service",
        user,
        language="prql",
        llm=llm,
        options=CorrectionOptions(budget=Budget(max_llm_calls=8), scaled_budget=False),
    )

    assert result.accepted is False
    assert result.sql == user  # comes back unchanged, not accepted
    assert {c["verdict"] for c in result.candidates} == {"refused"}
    assert "same SQL as the user's" in result.candidates[0]["reason"]
    assert not llm.prompts("judge")


def test_another_query_returning_the_users_rows_is_refused_when_the_issue_is_about_the_result(
    logs_db,
):
    # same rows as COUNTS_ALL, written differently (a filter that keeps every row)
    same_rows = (
        "from requests\nfilter request_id > 0\ngroup {service} (aggregate {errors = count this})"
    )
    llm = scripted(
        {
            "correct": [raw(same_rows)],
            "plan": [GENERATE_ONLY],
            "generate_sql": [gen(RIGHT)],
            "judge": [accept("counts only the 5xx requests")],
        }
    )
    result = correct(logs_db, QUESTION, COUNTS_ALL, language="prql", llm=llm)

    assert result.accepted is True and result.sql == RIGHT
    refused = [c for c in result.candidates if c["verdict"] == "refused"]
    assert [c["sql"] for c in refused] == [same_rows]
    assert "returns exactly the rows of the user's SQL" in refused[0]["reason"]


def test_the_same_rows_are_accepted_when_the_issue_is_about_speed(logs_db):
    faster = (
        "from requests\nfilter request_id > 0\ngroup {service} (aggregate {errors = count this})"
    )
    llm = scripted(
        {
            "correct": [raw(faster)],
            "plan": [GENERATE_ONLY],
            "generate_sql": [gen(faster)],
            "judge": [accept("same rows, cheaper plan")],
        }
    )
    result = correct(
        logs_db, "This query is too slow, make it faster", COUNTS_ALL, language="prql", llm=llm
    )

    assert result.accepted is True and result.sql == faster
    assert not [c for c in result.candidates if c["verdict"] == "refused"]


def test_a_plan_naming_split_fix_syntax_is_refused_for_prql(logs_db):
    plan = {
        "cursor": "n1",
        "nodes": [
            {"id": "n1", "tool": "split_fix_syntax", "input": {"sql": TYPO}, "children": ["n2"]},
            {"id": "n2", "tool": "generate_sql"},
        ],
    }
    known = ["detect_ambiguities", "inspect_columns", "run_sql", "generate_sql"]
    assert set(unavailable_tools("prql")) == {"split_fix_syntax"}
    with pytest.raises(PlanValidationError, match="unknown tool 'split_fix_syntax'"):
        check_plan(Plan.model_validate(plan), known)
    llm = scripted(
        {
            "correct": [raw(RIGHT)],
            "plan": [plan],
            "generate_sql": [gen(RIGHT)],
            "judge": [accept()],
        }
    )
    result = correct_typo_by_tree(logs_db, llm)

    assert result.accepted is True
    [event] = [e for e in result.trace if e.kind == "plan"]
    assert "dropped node 'n1': unknown tool 'split_fix_syntax'" in event.data["repairs"]
    started = [e.tool for e in result.trace if e.kind == "node_started"]
    assert "split_fix_syntax" not in started


def test_inspect_columns_runs_its_sql_templates_on_the_database(logs_db):
    plan = {
        "cursor": "n1",
        "nodes": [
            {
                "id": "n1",
                "tool": "inspect_columns",
                "input": {"table": "requests", "column": "status"},
                "children": ["n2"],
            },
            {"id": "n2", "tool": "generate_sql"},
        ],
    }
    llm = scripted(
        {"correct": [raw(RIGHT)], "plan": [plan], "generate_sql": [gen(RIGHT)], "judge": [accept()]}
    )
    # the plan's tool is under test: no scaled budget stopping at the lone raw rewrite
    options = CorrectionOptions(scaled_budget=False)
    result = correct(logs_db, QUESTION, TYPO, language="prql", llm=llm, options=options)

    inspected = next(e for e in result.trace if e.kind == "node_finished" and e.node == "n1")
    assert inspected.data["status"] == "done"
    assert "requests.status: 7 rows, 0% null, 5 distinct; top values: 200 (3)" in inspected.summary
    templates = [e for e in result.trace if e.kind == "statement" and e.node == "n1"]
    assert templates and all(e.data["sql"].startswith("SELECT") for e in templates)  # SQL
    assert "top values: 200 (3)" in llm.prompts("generate_sql")[0]


def test_text_to_query_mode_writes_prql_first(logs_db):
    llm = scripted(
        {
            "generate_sql": [gen(TYPO), gen(RIGHT)],
            "correct": [raw(RIGHT)],
            "plan": [GENERATE_ONLY],
            "judge": [accept()],
        }
    )
    result = correct(logs_db, QUESTION, None, language="prql", llm=llm)

    assert result.generated_initial_sql is True and result.original_sql == TYPO
    assert result.accepted is True and rows(result) == RIGHT_ROWS
    first = llm.prompts("generate_sql")[0]
    assert "there is no PRQL query yet. Write the PRQL query that answers" in first
    assert "Query language: PRQL" in first and "Write the SQL" not in first


WITNESSES = [
    # id, the witness's query, accepted
    ("an independent generation agrees", RIGHT, True),
    ("an independent generation returns another result", COUNTS_ALL, False),
]


@pytest.mark.parametrize(
    ("witness", "accepted"), [c[1:] for c in WITNESSES], ids=[c[0] for c in WITNESSES]
)
def test_a_right_generated_query_is_accepted_unchanged_only_when_a_witness_agrees(
    logs_db, witness, accepted
):
    """Text-to-query: the first query is the model's own answer, not a user's complaint, so
    repeating it is not refused; but candidates written with it in view repeat it, and a
    judge that vouches for it confirms nothing. It is accepted when, and only when, the
    witness (a generation from the question alone) returns its result too."""
    llm = scripted(
        {
            "generate_sql": [gen(RIGHT), gen(witness), gen(RIGHT), gen(RIGHT)],
            "correct": [raw(RIGHT)],
            "plan": [GENERATE_ONLY, GENERATE_ONLY],
            "judge": [accept()] * 4,
        }
    )
    result = correct(
        logs_db,
        QUESTION,
        None,
        language="prql",
        llm=llm,
        options=CorrectionOptions(budget=Budget(max_llm_calls=8), scaled_budget=False),
    )

    assert result.sql == RIGHT and rows(result) == RIGHT_ROWS
    assert result.accepted is accepted
    assert not [c for c in result.candidates if c["verdict"] == "refused"]
    overruled = [
        e
        for e in result.trace
        if e.kind == "judgement" and "no independent generation" in e.summary
    ]
    assert bool(overruled) is not accepted  # the judge vouched for it, and was overruled


# ---------------------------------------------------------------- dac and maplerepair on PRQL


def test_maplerepair_sends_a_query_that_does_not_compile_to_its_llm_repairer(logs_db):
    llm = scripted({"correct": [raw(RIGHT)]})
    result = correct(
        logs_db,
        QUESTION,
        TYPO,
        language="prql",
        options=CorrectionOptions(method="maplerepair"),
        llm=llm,
    )
    assert result.sql == RIGHT and rows(result) == RIGHT_ROWS
    assert [r.purpose for r in llm.requests] == ["correct"]
    prompt = llm.prompts("correct")[0]
    assert "```prql\n" + TYPO in prompt and "Reply with the repaired PRQL query" in prompt
    assert not [e for e in result.trace if e.kind == "rule_fired"]  # no SQL rule read PRQL


def test_maplerepair_leaves_a_prql_query_that_runs_as_it_is(logs_db):
    llm = scripted({})
    result = correct(
        logs_db,
        QUESTION,
        COUNTS_ALL,
        language="prql",
        options=CorrectionOptions(method="maplerepair"),
        llm=llm,
    )
    assert result.sql == COUNTS_ALL and llm.requests == []
    assert "the repair rules read SQL, not PRQL" in result.reason


def test_dac_reads_prql_through_its_compiled_sql_and_asks_for_no_sketch(logs_db):
    links = {"links": [{"phrase": "server errors", "kind": "column", "table": "requests",
                        "column": "status"}]}  # fmt: skip
    llm = scripted({"link_entities": [links], "correct": [raw(RIGHT)]})
    result = correct(
        logs_db,
        QUESTION,
        COUNTS_ALL,
        language="prql",
        options=CorrectionOptions(method="dac"),
        llm=llm,
    )
    assert [r.purpose for r in llm.requests] == ["link_entities", "correct"]  # no sketch
    feedback = llm.prompts("correct")[0]
    assert 'the issue mentions the columns "requests.status"' in feedback  # unread by COUNTS_ALL
    assert "```prql" in feedback and "Reply with the corrected PRQL query" in feedback
    assert result.sql == RIGHT and rows(result) == RIGHT_ROWS


RIGHT_SQL = "SELECT service, COUNT(*) AS errors FROM requests WHERE status >= 500 GROUP BY service"
COUNTS_ALL_SQL = "SELECT service, COUNT(*) AS errors FROM requests GROUP BY service"
RIGHT_PRQL = RIGHT  # the rewrite of RIGHT_SQL is the PRQL a person would write


def sql_block(text: str) -> str:
    return f"The corrected query:\n```sql\n{text}\n```"


def test_sql_written_for_a_prql_question_is_kept_as_prql(logs_db):
    """A small model writes SQL when asked for PRQL: the first query and raw's rewrite
    come back as PRQL, each after its rows were checked against the SQL's."""
    llm = scripted({"generate_sql": [gen(COUNTS_ALL_SQL)], "correct": [sql_block(RIGHT_SQL)]})
    result = correct(
        logs_db, QUESTION, None, language="prql", llm=llm, options=CorrectionOptions(method="raw")
    )

    assert result.original_sql == COUNTS_ALL
    assert result.sql == RIGHT_PRQL
    assert result.accepted is True and rows(result) == RIGHT_ROWS
    kept = [e for e in result.trace if e.kind == "sql_translated"]
    assert [e.data["written"] for e in kept] == [COUNTS_ALL_SQL, RIGHT_SQL]
    assert [e.node for e in kept] == [None, "raw"]
    assert progress_line(kept[1]) == (  # what `acts-sql fix` prints as it happens
        "  sql_translated raw written in SQL; kept as its prql rewrite, which returns the same "
        "2 row(s)"
    )
    checks = [
        e.data["sql"] for e in result.trace if e.kind == "statement" and e.purpose == "translate"
    ]
    assert RIGHT_SQL in checks and result.sql in checks  # both ran, and are in the trace


def test_an_acts_candidate_written_in_sql_joins_the_pool_as_prql(logs_db):
    llm = scripted(
        {
            "correct": [raw("from requests\naggregate {n = count}")],  # does not compile
            "plan": [GENERATE_ONLY],
            "generate_sql": [gen(RIGHT_SQL)],
            "judge": [accept()],
        }
    )
    result = correct(
        logs_db, QUESTION, TYPO, language="prql", llm=llm, options=CorrectionOptions(candidates=1)
    )

    assert result.accepted is True and rows(result) == RIGHT_ROWS
    assert result.sql == RIGHT_PRQL
    [candidate] = [c for c in result.candidates if c["sql"] == result.sql]
    assert candidate["origin"] == "greedy:from_sql"


def test_sql_whose_rewrite_is_not_covered_stays_sql_and_fails_to_compile(logs_db):
    windowed = "SELECT service, RANK() OVER (ORDER BY latency_ms) AS r FROM requests"
    llm = scripted({"generate_sql": [gen(windowed)], "correct": [sql_block(windowed)]})
    result = correct(
        logs_db, QUESTION, None, language="prql", llm=llm, options=CorrectionOptions(method="raw")
    )

    assert result.sql == windowed and result.accepted is False
    assert not [e for e in result.trace if e.kind == "sql_translated"]


LINKS = {"links": [{"phrase": "server errors", "kind": "column", "table": "requests",
                    "column": "status"}]}  # fmt: skip
SCRIPTS = {
    "dac": ({"link_entities": [LINKS], "correct": [sql_block(RIGHT_SQL)]}, COUNTS_ALL),
    "maplerepair": ({"correct": [sql_block(RIGHT_SQL)]}, TYPO),
    "critic": ({"correct": [{"critique": "only 5xx", "sql": RIGHT_SQL}]}, TYPO),
}


def test_vote_counts_sql_samples_by_their_prql_rewrite(logs_db):
    """Two samples in SQL and one in PRQL that all mean the same query are one candidate with
    three votes."""
    replies = [sql_block(RIGHT_SQL), sql_block(RIGHT_SQL.lower()), raw(RIGHT)]
    llm = scripted({"correct": replies})
    result = correct(
        logs_db,
        QUESTION,
        TYPO,
        language="prql",
        llm=llm,
        options=CorrectionOptions(method="vote", candidates=3),
    )

    assert result.accepted is True and result.sql == RIGHT_PRQL
    [candidate] = result.candidates
    assert candidate["votes"] == 3


@pytest.mark.parametrize("method", list(SCRIPTS))
def test_every_method_keeps_its_sql_rewrite_as_prql(logs_db, method):
    script, user = SCRIPTS[method]
    result = correct(
        logs_db,
        QUESTION,
        user,
        language="prql",
        llm=scripted(script),
        options=CorrectionOptions(method=method),
    )

    [kept] = [e for e in result.trace if e.kind == "sql_translated"]
    assert kept.data["written"] == RIGHT_SQL
    checks = [e.data["sql"] for e in result.trace if e.purpose == "translate"]
    assert checks == [RIGHT_SQL, RIGHT_PRQL]  # recorded once each, as the check they are
    assert result.sql == kept.data["sql"] == RIGHT_PRQL
    assert rows(result) == RIGHT_ROWS
