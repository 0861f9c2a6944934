"""Right answers and honest flags: the engine's trust rules, end to end.

Scripted LLM, real SQLite (the demo database), the Figure 3 task: "Which
rooms have overlapping bookings?" with the user's SQL counting bookings.
Every scenario's script starts with the raw single-turn rewrite (purpose
`correct`), which acts always makes one of the first candidates.
"""

from __future__ import annotations

import json
import sqlite3

from typer.testing import CliRunner

from acts_sql import Budget, correct
from acts_sql.cli.app import app
from acts_sql.db.connect import open_database
from acts_sql.engine.options import CorrectionOptions
from acts_sql.engine.runner import run_correction
from acts_sql.sql.query_text import normalize_sql
from support import scripted

GENERATE_ONLY = {"cursor": "n1", "nodes": [{"id": "n1", "tool": "generate_sql"}]}
NO_AMBIGUITY_PLAN = {
    "cursor": "n1",
    "nodes": [{"id": "n1", "tool": "detect_ambiguities", "description": "what is unclear?"}],
}
TWO_READINGS = {
    "ambiguities": [
        {
            "phrase": "overlapping bookings",
            "interpretations": ["more than one booking", "time ranges intersect"],
        }
    ]
}


def raw(sql: str) -> str:
    return f"The query should be:\n```sql\n{sql}\n```"


def gen(sql: str) -> dict[str, str]:
    return {"sql": sql, "rationale": "scripted"}


def accept(reason: str = "it does what the issue asks", group: str | None = None) -> dict:
    return {"reason": reason, "verdict": "accept", "group": group, "backtrack_to": None}


def reject(reason: str, to: str | None = None) -> dict:
    return {"reason": reason, "verdict": "reject", "group": None, "backtrack_to": to}


def same(a: str, b: str) -> bool:
    return normalize_sql(a, "sqlite") == normalize_sql(b, "sqlite")


def reformatted(sql: str) -> str:
    """The same statement in other clothes: lower case, one line, a semicolon."""
    return " ".join(sql.lower().split()) + " ;"


def of_kind(result, kind):
    return [e for e in result.trace if e.kind == kind]


def rows_of(db_url: str, sql: str) -> list[list]:
    path = db_url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as conn:
        return [list(row) for row in conn.execute(sql)]


def room_query(ids: str) -> str:
    return f"SELECT room_id, name FROM rooms WHERE room_id IN ({ids}) ORDER BY room_id"


def test_a_users_sql_reformatted_is_refused_and_the_next_right_candidate_accepted(
    demo_db, demo_tasks
):
    task = demo_tasks["figure3"]
    llm = scripted(
        {
            "plan": [NO_AMBIGUITY_PLAN],
            "detect_ambiguities": [{"ambiguities": []}],
            "correct": [raw(reformatted(task.sql))],
            "generate_sql": [gen(task.sql), gen(task.right_sql)],
            # a judge that accepts whatever it is shown
            "judge": [accept(), accept(), accept()],
        }
    )
    result = correct(demo_db, task.question, task.sql, llm=llm)

    assert result.accepted is True
    assert same(result.sql, task.right_sql)
    # the user's SQL (twice, once reformatted) never reached the judge
    assert len(llm.prompts("judge")) == 1
    refusals = of_kind(result, "refusal")
    assert refusals and "same SQL as the user's" in refusals[0].summary
    refused = [c for c in result.candidates if c["verdict"] == "refused"]
    assert len(refused) == 1 and refused[0]["votes"] == 2  # the raw rewrite and its repeat
    assert same(refused[0]["sql"], task.sql)


def test_b_every_candidate_equals_the_users_sql_not_accepted_exit_1(demo_db, demo_tasks, tmp_path):
    task = demo_tasks["figure3"]
    script = {
        "plan": [json.dumps(GENERATE_ONLY), json.dumps(GENERATE_ONLY)],
        "correct": [raw(task.sql)],
        "generate_sql": [json.dumps(gen(reformatted(task.sql)))] * 6,
        "judge": [json.dumps(accept())] * 6,
    }
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script))
    out = CliRunner().invoke(
        app,
        [
            "fix",
            "--db",
            demo_db,
            "--question",
            task.question,
            "--sql",
            task.sql,
            "--llm",
            f"scripted:{path}",
            "--max-llm-calls",
            "8",
            "--json",
        ],
    )
    assert out.exit_code == 1, out.output
    result = json.loads(out.stdout)
    assert result["accepted"] is False
    assert result["sql"] == task.sql  # the user's SQL comes back unchanged
    assert "user's SQL" in result["reason"]
    verdicts = {c["verdict"] for c in result["candidates"]}
    assert verdicts == {"refused"}
    # the judge was never asked: there was nothing it could accept
    assert not [e for e in result["trace"] if e["kind"] == "llm_call" and e["purpose"] == "judge"]


def test_c_five_candidates_three_groups_the_judge_picks_the_right_group(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    wrong_a = room_query("1, 2")
    wrong_a2 = "SELECT room_id, name FROM rooms WHERE room_id < 3 ORDER BY room_id"
    right_b = task.right_sql
    right_b2 = task.right_sql.replace("SELECT DISTINCT", "SELECT DISTINCT /* b2 */")
    odd_c = room_query("6")
    llm = scripted(
        {
            "plan": [GENERATE_ONLY],
            "correct": [raw(wrong_a)],
            # greedy + four samples: A twice more (one a repeat), B twice, C once
            "generate_sql": [gen(wrong_a), gen(right_b), gen(wrong_a2), gen(right_b2), gen(odd_c)],
            "judge": [accept("group B lists the rooms whose bookings intersect", group="B")],
        }
    )
    result = correct(
        demo_db,
        task.question,
        task.sql,
        llm=llm,
        options=CorrectionOptions(candidates=5, evidence_gate=False),
    )

    assert result.accepted is True
    assert same(result.sql, task.right_sql) or same(result.sql, right_b2)
    prompt = llm.prompts("judge")[0]
    # the judge saw three groups side by side, largest first, with their votes
    assert "Group A: 3 of 6 candidate(s) agree" in prompt
    assert "Group B: 2 of 6" in prompt and "Group C: 1 of 6" in prompt
    assert prompt.index("Group A") < prompt.index("Group B") < prompt.index("Group C")
    assert "against the user's result" in prompt
    groups = {g["id"]: g for g in result.groups}
    assert sorted(g["votes"] for g in groups.values()) == [1, 2, 3]
    judgement = next(e for e in of_kind(result, "judgement") if e.data["verdict"] == "accept")
    assert judgement.data["labels"]["B"] == judgement.data["group"]
    assert result.result.rows == rows_of(demo_db, task.right_sql)  # intersecting bookings only


def test_d_nothing_runs_but_the_users_sql_does_it_comes_back_not_accepted(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    # tables with no near name in the schema: no deterministic repair applies
    llm = scripted(
        {
            "plan": [GENERATE_ONLY, GENERATE_ONLY],
            "correct": [raw("SELECT * FROM qqq_overlaps")],
            "generate_sql": [gen("SELECT * FROM xyzzy")] * 4,
            "fix_syntax": [{"sql": "SELECT * FROM plugh"}] * 4,
            "judge": [accept()] * 4,
        }
    )
    result = correct(
        demo_db,
        task.question,
        task.sql,
        llm=llm,
        options=CorrectionOptions(budget=Budget(max_llm_calls=8)),
    )

    assert result.accepted is False
    assert result.sql == task.sql
    assert "returning the user's SQL unchanged" in result.reason
    assert result.result is not None and result.result.status == "ok"
    assert all(c["verdict"] == "failed" for c in result.candidates)
    # the failing candidate went to a repair, and the failed repair was not built upon
    assert any(e.kind == "fix_inserted" for e in result.trace)
    fixes = [n for n in result.tree if n["tool"] == "split_fix_syntax"]
    assert fixes and not any(".fix.fix" in n["id"] for n in result.tree)
    assert not llm.prompts("judge")


def test_e_a_flat_plan_with_empty_children_runs_all_its_nodes(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    flat = {
        "cursor": "n1",
        "nodes": [
            {
                "id": "n1",
                "tool": "inspect_columns",
                "input": {"table": "bookings", "column": "room_id"},
            },
            {"id": "n2", "tool": "run_sql", "input": {"sql": "SELECT COUNT(*) FROM bookings"}},
            {"id": "n3", "tool": "generate_sql", "input": {}},
        ],
    }
    llm = scripted(
        {
            "plan": [flat],
            "correct": [raw(task.sql)],
            "generate_sql": [gen(task.right_sql)],
            "judge": [accept()],
        }
    )
    result = correct(demo_db, task.question, task.sql, llm=llm)

    nodes = {n["id"]: n for n in result.tree}
    assert nodes["n1"]["children"] == ["n2"] and nodes["n2"]["children"] == ["n3"]
    assert [nodes[i]["status"] for i in ("n1", "n2", "n3")] == ["done", "done", "accepted"]
    started = [e.node for e in of_kind(result, "node_started")]
    assert started == ["n1", "n2", "n3"]
    assert of_kind(result, "plan")[0].data["chained"] == ["n2", "n3"]


def test_f_a_choose_reply_naming_the_current_node_costs_no_extra_call(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    llm = scripted(
        {
            "plan": [NO_AMBIGUITY_PLAN],
            "detect_ambiguities": [TWO_READINGS],
            "choose": [{"reason": "this one", "cursor": "n1"}],
            "correct": [raw(task.sql)],
            "generate_sql": [gen(task.right_sql)],
            "judge": [accept()],
        }
    )
    result = correct(demo_db, task.question, task.sql, llm=llm)

    assert len(llm.prompts("choose")) == 1
    failed = of_kind(result, "choice_failed")
    assert failed and failed[0].data["cursor"] == "n1.1"
    assert result.accepted is True
    assert {n["id"]: n["status"] for n in result.tree}["n1.1"] == "accepted"


def test_g_an_unknown_column_candidate_is_repaired_from_the_schema(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    misspelt = task.right_sql.replace("r.name", "r.room_name")
    llm = scripted(
        {
            "plan": [GENERATE_ONLY],
            "correct": [raw(misspelt)],
            "generate_sql": [gen(misspelt)],
            "judge": [accept()],
        }
    )
    result = correct(demo_db, task.question, task.sql, llm=llm)

    assert result.accepted is True
    assert same(result.sql, task.right_sql)
    winner = next(c for c in result.candidates if c["verdict"] == "accepted")
    # the raw rewrite writes the misspelt column first: its repair is the candidate, and the
    # pool's repair of the same SQL a vote for it
    assert winner["origin"] == "raw:rule:unknown_identifier"
    assert winner["votes"] >= 2
    failed = next(c for c in result.candidates if c["verdict"] == "failed")
    assert "room_name" in failed["reason"]


def test_g_the_llm_repair_is_told_the_schemas_nearest_names(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    misspelt = task.right_sql.replace("r.name", "r.room_name")
    llm = scripted(
        {
            "plan": [GENERATE_ONLY],
            "correct": [raw(misspelt)],
            "generate_sql": [gen(misspelt)],
            "fix_syntax": [{"sql": task.right_sql}],
            "judge": [accept()],
        }
    )
    # without deterministic repairs the failing pool goes to split_fix_syntax
    executor = open_database(demo_db)
    try:
        result = run_correction(
            executor=executor,
            llm=llm,
            question=task.question,
            sql=task.sql,
            options=CorrectionOptions(rule_candidates=False),
        )
    finally:
        executor.close()

    assert result.accepted is True
    prompt = llm.prompts("fix_syntax")[0]
    assert "room_name" in prompt and "nearest" in prompt and "name" in prompt
    assert "no such column" in prompt  # the database's own message
    assert not llm.prompts("decompose")  # not a syntax error: sqlglot decomposed it


def test_h_all_branches_pruned_early_with_budget_left_one_replan(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    second_plan = {"cursor": "m1", "nodes": [{"id": "m1", "tool": "generate_sql"}]}
    llm = scripted(
        {
            "plan": [NO_AMBIGUITY_PLAN, second_plan],
            "detect_ambiguities": [TWO_READINGS],
            "choose": [{"reason": "first", "cursor": "n1.1"}],
            "correct": [raw(room_query("1"))],
            "generate_sql": [
                gen(room_query("2")),
                gen(room_query("3")),
                gen(room_query("4")),
                gen(room_query("5")),
                gen(task.right_sql),
            ],
            "judge": [
                reject("rooms 1 and 2 only: too few", to="n1"),
                reject("room 3 alone is not it", to="n1"),
                reject("room 4 has no bookings"),
                reject("room 5 alone is not it"),
                accept(),
            ],
        }
    )
    # the replan is under test: the whole budget (the scaled one ends before the replan)
    options = CorrectionOptions(scaled_budget=False)
    result = correct(demo_db, task.question, task.sql, llm=llm, options=options)

    assert result.accepted is True
    assert same(result.sql, task.right_sql)
    assert len(llm.prompts("plan")) == 2
    replans = of_kind(result, "replan")
    assert len(replans) == 1
    assert "room 5 alone is not it" in llm.prompts("plan")[1]
    accepted = next(n for n in result.tree if n["status"] == "accepted")
    assert accepted["id"].startswith("r.") and accepted["origin"] == "replan"


def test_an_acceptance_needs_two_candidates_that_agree_when_there_are_pools(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    right_again = task.right_sql.replace("SELECT DISTINCT", "SELECT DISTINCT /* again */")
    llm = scripted(
        {
            "plan": [GENERATE_ONLY, GENERATE_ONLY],  # the second plan: after the root's pool
            "correct": [raw(room_query("2"))],
            # first pool: three results, one vote each; second pool: the right rows again
            "generate_sql": [
                gen(task.right_sql),
                gen(room_query("3")),
                gen(right_again),
                gen(room_query("4")),
            ],
            "judge": [
                accept("group B lists rooms whose bookings intersect", group="B"),
                accept("group A lists rooms whose bookings intersect", group="A"),
            ],
        }
    )
    result = correct(
        demo_db,
        task.question,
        task.sql,
        llm=llm,
        options=CorrectionOptions(candidates=2, evidence_gate=False),
    )

    unconfirmed = of_kind(result, "unconfirmed")
    assert len(unconfirmed) == 1 and unconfirmed[0].data["votes"] == 1
    assert result.accepted is True
    assert len(llm.prompts("judge")) == 2
    assert "Group A: 2 of" in llm.prompts("judge")[1]  # the right rows, now with two votes
    assert result.result.rows == rows_of(demo_db, task.right_sql)


def test_an_unconfirmed_choice_is_returned_first_when_nothing_is_accepted(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    llm = scripted(
        {
            "plan": [GENERATE_ONLY],
            "correct": [raw(room_query("2"))],
            "generate_sql": [gen(task.right_sql), gen(room_query("3"))],
            "judge": [accept("group B is right", group="B")],
        }
    )
    result = correct(
        demo_db,
        task.question,
        task.sql,
        llm=llm,
        options=CorrectionOptions(
            candidates=2, budget=Budget(max_llm_calls=5), evidence_gate=False
        ),
    )

    assert result.accepted is False
    assert result.result.rows == rows_of(demo_db, task.right_sql)  # the judge's pick, unconfirmed
    chosen = next(c for c in result.candidates if c["judge"] == "accept")
    assert chosen["verdict"] == "unjudged"


def test_the_raw_rewrite_is_written_first_and_counts_even_if_no_pool_formed(demo_db, demo_tasks):
    """The budget runs out before any pool: the raw rewrite, written before the plan,
    is still executed and returned (not accepted): never worse than one raw call."""
    task = demo_tasks["figure3"]
    llm = scripted(
        {
            "plan": [NO_AMBIGUITY_PLAN],
            "correct": [raw(task.right_sql)],
            "detect_ambiguities": [TWO_READINGS],
        }
    )
    result = correct(
        demo_db,
        task.question,
        task.sql,
        llm=llm,
        options=CorrectionOptions(budget=Budget(max_llm_calls=2)),
    )

    assert [r.purpose for r in llm.requests] == ["correct", "plan"]
    assert result.accepted is False
    assert same(result.sql, task.right_sql)
    assert [c["origin"] for c in result.candidates] == ["raw"]
    assert "LLM calls" in result.reason


LONG_QUESTION = (
    "Which rooms have overlapping bookings, that is two bookings of the same room whose time "
    "ranges intersect?"
)


def test_an_accept_whose_reason_only_restates_the_issue_is_not_an_acceptance(demo_db, demo_tasks):
    """In a kept 0.5B run the judge accepted with "The issue asks for a list of all years
    between two given dates ...": the issue's words, nothing of the candidate."""
    task = demo_tasks["figure3"]
    restated = "The issue asks " + LONG_QUESTION.lower().replace("?", ".")
    llm = scripted(
        {
            "plan": [GENERATE_ONLY],
            "correct": [raw(room_query("2"))],
            "generate_sql": [gen(room_query("3"))],
            "judge": [accept(restated, group="A")],
        }
    )
    result = correct(
        demo_db,
        LONG_QUESTION,
        task.sql,
        llm=llm,
        options=CorrectionOptions(candidates=1, budget=Budget(max_llm_calls=4)),
    )

    assert result.accepted is False
    withdrawn = [e for e in of_kind(result, "judgement") if "is copied" in e.summary]
    assert len(withdrawn) == 1 and "from the issue" in withdrawn[0].summary
    assert withdrawn[0].data["by"] == "engine"


def test_an_accept_with_the_reason_a_rejection_gave_is_not_an_acceptance(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    why = "Rooms with one booking still appear and rooms with intersecting bookings are missing."
    llm = scripted(
        {
            "plan": [GENERATE_ONLY, GENERATE_ONLY],
            "correct": [raw(room_query("2"))],
            "generate_sql": [gen(room_query("3")), gen(room_query("4"))],
            "judge": [reject(why), accept(why, group="A")],
        }
    )
    result = correct(
        demo_db,
        task.question,
        task.sql,
        llm=llm,
        options=CorrectionOptions(candidates=1, budget=Budget(max_llm_calls=8)),
    )

    assert len(llm.prompts("judge")) == 2
    assert result.accepted is False
    withdrawn = [e for e in of_kind(result, "judgement") if "is copied" in e.summary]
    assert len(withdrawn) == 1 and "was rejected with" in withdrawn[0].summary


def test_an_accept_that_quotes_its_candidates_rows_stands(demo_db, demo_tasks):
    """Quoting the question a little and the candidate's own result is describing it."""
    task = demo_tasks["figure3"]
    llm = scripted(
        {
            "plan": [GENERATE_ONLY],
            "correct": [raw(task.right_sql)],
            "generate_sql": [gen(task.right_sql)],
            "judge": [
                accept(
                    "Group A keeps only rooms with two bookings whose time ranges intersect, "
                    "checked by comparing start and end times, as the issue asks.",
                    group="A",
                )
            ],
        }
    )
    result = correct(
        demo_db,
        LONG_QUESTION,
        task.sql,
        llm=llm,
        options=CorrectionOptions(candidates=1, budget=Budget(max_llm_calls=4)),
    )
    assert result.accepted is True
    assert result.result.rows == rows_of(demo_db, task.right_sql)


def test_an_accept_whose_reason_is_the_groups_shown_again_is_not_an_acceptance(demo_db, demo_tasks):
    """A 0.5B judge "accepted" with the prompt's group view copied back: "The candidates of
    node n4.gen, grouped by their result (...): Group A: 1 of 1 candidate(s) agree ..."."""
    task = demo_tasks["figure3"]
    wrong = room_query("3, 4")
    dump = (
        "The candidates of node n1, grouped by their result (candidates in one group return the "
        f"same rows): Group A, SQL: {wrong}"
    )
    llm = scripted(
        {
            "plan": [GENERATE_ONLY],
            "correct": [raw(wrong)],
            "generate_sql": [gen(wrong)],
            "judge": [accept(dump, group="A")],
        }
    )
    result = correct(
        demo_db,
        task.question,
        task.sql,
        llm=llm,
        options=CorrectionOptions(candidates=1, budget=Budget(max_llm_calls=4)),
    )

    assert result.accepted is False
    withdrawn = [e for e in of_kind(result, "judgement") if "is copied" in e.summary]
    assert len(withdrawn) == 1  # the instructions alone hold less than half of the reason


def test_an_accept_whose_reason_vouches_for_the_users_sql_is_not_an_acceptance(demo_db, demo_tasks):
    """Both wrong acceptances of the 1.5B on the 40 development tasks (SQLite_4, SQLite_39)
    came with "The user's SQL statement is already correct and does not need any changes.":
    a reason for a query that is never the answer, given for a candidate that changed it."""
    task = demo_tasks["figure3"]
    wrong = room_query("3, 4")
    llm = scripted(
        {
            "plan": [GENERATE_ONLY],
            "correct": [raw(wrong)],
            "generate_sql": [gen(wrong)],
            "judge": [
                accept(
                    "The user's SQL statement is already correct and does not need any changes.",
                    group="A",
                )
            ],
        }
    )
    result = correct(
        demo_db,
        task.question,
        task.sql,
        llm=llm,
        options=CorrectionOptions(candidates=1, budget=Budget(max_llm_calls=4)),
    )

    assert result.accepted is False
    withdrawn = [e for e in of_kind(result, "judgement") if "vouches for the user" in e.summary]
    assert len(withdrawn) == 1 and "does not need any changes" in withdrawn[0].summary
    assert withdrawn[0].data["by"] == "engine"
    # the candidate is still what comes back (ranking), just not as an acceptance
    assert same(result.sql, wrong)
