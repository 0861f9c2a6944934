"""The depth limit ends a path, not the run: a node below it is skipped and the search goes back
(a weak planner's long flat plan, chained, must not stop a run with calls left). Linear, with a
single path, stops there."""

from __future__ import annotations

from acts_sql import Budget, CorrectionOptions, correct
from acts_sql.sql.query_text import normalize_sql
from support import scripted


def inspect(node_id: str, column: str) -> dict:
    return {
        "id": node_id,
        "tool": "inspect_columns",
        "input": {"table": "bookings", "column": column},
    }


FLAT_THREE_INSPECTIONS = {
    "cursor": "n1",
    "nodes": [inspect("n1", "room_id"), inspect("n2", "start_time"), inspect("n3", "end_time")],
}


def replies(task) -> dict:
    return {
        "plan": [FLAT_THREE_INSPECTIONS],
        "correct": [f"The query should be:\n```sql\n{task.sql}\n```"],
        "generate_sql": [{"sql": task.right_sql, "rationale": "scripted"}],
        "judge": [
            {"reason": "it does what the issue asks", "verdict": "accept", "group": None},
        ],
    }


def test_a_node_below_the_depth_limit_is_skipped_and_the_search_goes_back(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    llm = scripted(replies(task))
    # n1 -> n2 -> n3 fill depths 1-3; the candidate n3 would need lies at depth 4
    result = correct(
        demo_db,
        task.question,
        task.sql,
        llm=llm,
        options=CorrectionOptions(budget=Budget(max_depth=3)),
    )

    assert "depth" not in result.reason
    assert result.accepted is True
    assert normalize_sql(result.sql, "sqlite") == normalize_sql(task.right_sql, "sqlite")
    nodes = {n["id"]: n for n in result.tree}
    assert nodes["n3.gen"]["depth"] == 4 and "depth limit (3)" in nodes["n3.gen"]["reason"]
    winner = next(n for n in result.tree if n["status"] == "accepted")
    assert winner["depth"] <= 3 and winner["parent"] == "n2"
    started = [e.node for e in result.trace if e.kind == "node_started"]
    assert "n3.gen" not in started  # never run, and no LLM call spent on it
    assert len(llm.prompts("generate_sql")) == 1


def test_linear_stops_at_the_depth_limit(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    llm = scripted(replies(task))
    result = correct(
        demo_db,
        task.question,
        task.sql,
        llm=llm,
        options=CorrectionOptions(method="linear", budget=Budget(max_depth=3)),
    )

    assert result.reason.startswith("budget exhausted: depth (3)")
    assert not llm.prompts("generate_sql")


def test_no_replan_is_asked_for_when_its_nodes_could_not_run(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    llm = scripted(replies(task))
    result = correct(
        demo_db,
        task.question,
        task.sql,
        llm=llm,
        options=CorrectionOptions(budget=Budget(max_depth=1)),
    )

    assert len(llm.prompts("plan")) == 1
    assert not [e for e in result.trace if e.kind == "replan"]
    assert result.reason.startswith("no branch left to explore")
