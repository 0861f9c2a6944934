"""Methods, ablation switches and text-to-SQL mode."""

from __future__ import annotations

import json

from acts_sql import Budget, CorrectionOptions, correct
from support import demo_script, scripted


def test_without_ambiguity_detection_the_node_is_skipped(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    script = demo_script("figure3")
    llm = scripted(
        {
            "plan": script["plan"],
            "correct": script["correct"],
            "generate_sql": script["generate_sql"][1:],
            "judge": script["judge"],
        }
    )
    result = correct(
        demo_db,
        task.question,
        task.sql,
        llm=llm,
        options=CorrectionOptions(ambiguity_detection=False),
    )

    nodes = {n["id"]: n for n in result.tree}
    assert nodes["n1"]["status"] == "skipped"
    assert nodes["n1.gen"]["status"] == "accepted"  # the engine-added leaf
    assert "detect_ambiguities" not in [e.purpose for e in result.trace if e.kind == "llm_call"]
    # the planner is told which tools exist in this configuration
    assert (
        "Available tools: inspect_columns, run_sql, split_fix_syntax, generate_sql."
        in llm.prompts("plan")[0]
    )


def test_without_execution_tools_the_agent_sees_no_results(demo_db, demo_tasks):
    task = demo_tasks["figure1"]
    llm = scripted(demo_script("figure1"))
    result = correct(
        demo_db, task.question, task.sql, llm=llm, options=CorrectionOptions(execution_tools=False)
    )

    nodes = {n["id"]: n for n in result.tree}
    assert nodes["n1"]["status"] == "skipped"  # inspect_columns is an execution tool
    judge_prompt = llm.prompts("judge")[0]
    assert "result: (not shown in this configuration)" in judge_prompt
    assert "126" not in judge_prompt  # the candidate's rows stay hidden
    assert "Its execution result:\n(not shown)" in llm.prompts("plan")[0]
    # the engine still executes the candidate before accepting it
    assert result.accepted is True and result.result.rows == [[126]]


def test_text_to_sql_generates_then_corrects(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    script = demo_script("figure3")
    initial = json.dumps({"sql": task.sql, "rationale": "count bookings"})
    witness = json.dumps({"sql": "SELECT no_such_column FROM bookings", "rationale": "guess"})
    script["generate_sql"] = [initial, witness, *script["generate_sql"]]
    # the judge vouches for the first reading, whose result is the first query's own and
    # which no witness confirms, then for the second, which one lone candidate returns and
    # no shape check supports: text-to-SQL mode overrules both
    script["judge"] = script["judge"] * 2
    llm = scripted(script)
    options = CorrectionOptions(budget=Budget(max_llm_calls=10))
    result = correct(demo_db, task.question, None, llm=llm, options=options)

    assert result.generated_initial_sql is True
    assert result.original_sql == task.sql
    overruled = [e.summary for e in result.trace if e.kind == "judgement"]
    assert len(overruled) == 2 and "no independent generation" in overruled[0]
    assert "no check besides the judge" in overruled[1]
    assert result.accepted is False
    first = llm.requests[0]
    assert first.purpose == "generate_sql"
    assert "there is no SQL yet. Write the SQL that answers" in first.messages[-1].content
    # the generated SQL and its result are what the plan then sees
    assert task.sql in llm.prompts("plan")[0]


def test_critic_method_is_one_call_and_accepts_what_executes(demo_db, demo_tasks):
    task = demo_tasks["figure1"]
    llm = scripted({"correct": [{"critique": "types contain Electronics", "sql": task.right_sql}]})
    result = correct(
        demo_db, task.question, task.sql, llm=llm, options=CorrectionOptions(method="critic")
    )
    assert result.method == "critic"
    assert result.usage.llm_calls == 1
    assert result.accepted is True and result.result.rows == [[126]]


def test_critic_method_does_not_accept_sql_that_fails(demo_db, demo_tasks):
    task = demo_tasks["figure1"]
    llm = scripted({"correct": [{"critique": "", "sql": "SELEC 1"}]})
    result = correct(
        demo_db, task.question, task.sql, llm=llm, options=CorrectionOptions(method="critic")
    )
    assert result.accepted is False
    assert "does not execute" in result.reason


def test_raw_method_takes_every_sql_block_as_a_statement(demo_db, demo_tasks):
    task = demo_tasks["figure1"]
    reply = (
        "The filter is too strict.\n```sql\nSELECT 1;\n```\nThen:\n```sql\n"
        + task.right_sql
        + "\n```"
    )
    llm = scripted({"correct": [reply]})
    result = correct(
        demo_db, task.question, task.sql, llm=llm, options=CorrectionOptions(method="raw")
    )

    assert result.statements[0] == "SELECT 1"
    assert len(result.statements) == 2
    assert result.accepted is True
    assert result.result.rows == [[126]]  # the last statement's rows
    # the raw baseline is a single user turn, not the agent's prompt
    assert [m.role for m in llm.requests[0].messages] == ["user"]
    assert task.sql in llm.requests[0].messages[0].content


def test_raw_method_keeps_a_block_with_two_statements_as_one_prediction(demo_db, demo_tasks):
    # the official baseline submits each ```sql block as one element of pred_sqls, even when it
    # holds several statements (sqlite3 then refuses it, psycopg2 runs it whole)
    task = demo_tasks["figure1"]
    reply = "```sql\nSELECT 1;\nSELECT 2;\n```\n```sql\nSELECT 3\n```"
    result = correct(
        demo_db,
        task.question,
        task.sql,
        llm=scripted({"correct": [reply]}),
        options=CorrectionOptions(method="raw"),
    )

    assert result.statements == ["SELECT 1;\nSELECT 2", "SELECT 3"]


def test_events_reach_a_listener_while_the_run_goes_on(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    seen = []
    result = correct(
        demo_db, task.question, task.sql, llm=scripted(demo_script("figure3")), on_event=seen.append
    )
    assert [e.seq for e in seen] == list(range(len(result.trace)))
    assert seen[0].kind == "run_started" and seen[-1].kind == "run_finished"
    statements = [e for e in seen if e.kind == "statement"]
    assert statements and all("seconds" in e.data and e.purpose for e in statements)


def test_a_rerun_through_the_llm_cache_is_replayed_and_identical(demo_db, demo_tasks, tmp_path):
    from acts_sql.llm.cache import CachedBackend

    task = demo_tasks["figure3"]
    first = correct(
        demo_db,
        task.question,
        task.sql,
        llm=CachedBackend(scripted(demo_script("figure3")), tmp_path),
    )
    # an empty script: every answer must come from the cache
    second = correct(demo_db, task.question, task.sql, llm=CachedBackend(scripted({}), tmp_path))
    assert first.usage.replayed_llm_calls == 0
    assert second.usage.replayed_llm_calls == second.usage.llm_calls == 7
    assert second.sql == first.sql and second.accepted
    calls = [e for e in second.trace if e.kind == "llm_call"]
    assert all(e.data["replayed"] for e in calls)


def test_vote_takes_the_largest_group_of_results_that_run(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    right = task.right_sql
    odd = "SELECT room_id, name FROM rooms WHERE room_id = 6"
    replies = [
        f"```sql\n{odd}\n```",  # greedy: a lone wrong answer
        f"```sql\n{right}\n```",
        "```sql\nSELECT nope FROM nowhere\n```",  # does not run: no vote
        f"The fix:\n```sql\n{right.lower()}\n```",  # the same SQL again: a vote
        "```sql\nSELECT room_id, name FROM rooms WHERE room_id IN (1, 5) ORDER BY room_id\n```",
    ]
    llm = scripted({"correct": replies})
    result = correct(
        demo_db,
        task.question,
        task.sql,
        llm=llm,
        options=CorrectionOptions(method="vote", candidates=5, temperature=0.9),
    )

    assert result.accepted is True
    assert " ".join(result.sql.split()) == " ".join(right.split())
    winner = next(g for g in result.groups if g["votes"] == 3)  # right twice + same rows once
    assert len(winner["members"]) == 2
    requests = llm.requests
    assert [r.temperature for r in requests] == [0.0, 0.9, 0.9, 0.9, 0.9]
    assert [r.seed for r in requests] == [None, 1, 2, 3, 4]
    duplicates = [e for e in result.trace if e.kind == "candidate" and e.data["duplicate"]]
    assert len(duplicates) == 1
    assert "3 of 5" in result.reason


def test_vote_with_nothing_that_runs_is_not_accepted(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    llm = scripted({"correct": ["```sql\nSELECT nope FROM nowhere\n```"] * 3})
    result = correct(
        demo_db,
        task.question,
        task.sql,
        llm=llm,
        options=CorrectionOptions(method="vote", candidates=3),
    )
    assert result.accepted is False and "no sample runs" in result.reason


def test_vote_candidates_carry_the_statements_the_vote_would_return(demo_db, demo_tasks):
    """A candidate is scored as the method would hand it in (`bench candidates` reads the
    event's statements): a block holding two statements stays one, as `raw` keeps it."""
    task = demo_tasks["figure3"]
    one = "SELECT room_id FROM rooms WHERE room_id = 5"
    two = f"{one};\n{one}"
    llm = scripted({"correct": [f"```sql\n{two}\n```", f"```sql\n{two}\n```"]})
    result = correct(
        demo_db,
        task.question,
        task.sql,
        llm=llm,
        options=CorrectionOptions(method="vote", candidates=2),
    )

    events = [e for e in result.trace if e.kind == "candidate"]
    assert [e.data["statements"] for e in events] == [[two], [two]]  # the repeat: a vote
    assert result.statements == [two]
