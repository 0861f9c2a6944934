"""Bad LLM output never crashes a run: each case ends in a clear node failure."""

from __future__ import annotations

import json

import pytest

from acts_sql import CorrectionOptions, correct
from support import demo_script, judge_story, scripted

GOOD_PLAN = demo_script("figure3")["plan"][0]


def run(demo_db, task, script, **kw):
    llm = scripted(script)
    return correct(demo_db, task.question, task.sql, llm=llm, options=CorrectionOptions(**kw)), llm


def plan_with(**changes) -> str:
    plan = json.loads(GOOD_PLAN)
    plan.update(changes)
    return json.dumps(plan)


def events(result, kind):
    return [e for e in result.trace if e.kind == kind]


@pytest.mark.parametrize(
    ("bad_reply", "fed_back"),
    [
        ("I think we should look at the bookings table first.", "no JSON object"),
        (
            json.dumps({"cursor": "n1", "nodes": [{"id": "n1", "tool": "drop_tables"}]}),
            "unknown tool 'drop_tables'",
        ),
    ],
    ids=["prose", "nothing-usable"],
)
def test_a_plan_with_nothing_usable_is_reasked_with_the_reason(
    demo_db, demo_tasks, bad_reply, fed_back
):
    script = demo_script("figure3")
    script["plan"] = [bad_reply, GOOD_PLAN]
    result, llm = run(demo_db, demo_tasks["figure3"], script)

    assert result.accepted is True
    plan_prompts = llm.prompts("plan")
    assert len(plan_prompts) == 2
    assert fed_back in plan_prompts[1]
    assert events(result, "plan")[0].data["attempts"] == 2


@pytest.mark.parametrize(
    ("flawed", "repair", "root"),
    [
        (
            {
                "cursor": "n1",
                "nodes": [
                    {"id": "n1", "tool": "detect_ambiguities", "children": ["n2"]},
                    {"id": "n2", "tool": "generate_sql", "children": ["n3"]},
                    {"id": "n3", "tool": "generate_sql", "children": ["n2"]},
                ],
            },
            "dropped link 'n3' -> 'n2': it has a parent",
            "n1",
        ),
        (
            {
                "cursor": "n2",
                "nodes": [
                    {"id": "n2", "tool": "detect_ambiguities", "children": ["n3"]},
                    {"id": "n3", "tool": "generate_sql", "children": ["n2"]},
                ],
            },
            "dropped link 'n3' -> 'n2': a cycle",
            "n2",
        ),
        (
            {"cursor": "n9", "nodes": [{"id": "n1", "tool": "detect_ambiguities"}]},
            "cursor 'n9' moved to the root 'n1'",
            "n1",
        ),
        (
            {
                "cursor": "n1",
                "nodes": [
                    {"id": "n1", "tool": "detect_ambiguities", "children": ["x"]},
                    {"id": "n1", "tool": "run_sql"},
                    {"id": "n5", "tool": "drop_tables"},
                ],
            },
            "dropped link 'n1' -> 'x': no such node",
            "n1",
        ),
    ],
    ids=["two-parents", "cycle", "cursor-nowhere", "unknown-child"],
)
def test_a_flawed_plan_is_repaired_without_asking_again(demo_db, demo_tasks, flawed, repair, root):
    script = demo_script("figure3")
    script["plan"] = [json.dumps(flawed)]
    result, llm = run(demo_db, demo_tasks["figure3"], script)

    assert len(llm.prompts("plan")) == 1
    plan = events(result, "plan")[0]
    assert repair in plan.data["repairs"] and "repaired" in plan.summary
    assert result.tree[0]["id"] == root
    assert not events(result, "plan_failed")


def test_plan_repairs_are_reported_one_by_one():
    from acts_sql.engine.search import TOOLS
    from acts_sql.engine.tree import repair_plan
    from acts_sql.protocol import Plan

    plan = Plan.model_validate(
        {
            "cursor": "a",
            "nodes": [
                {"id": "a", "tool": "run_sql", "children": ["a", "b", "ghost"]},
                {"id": "b", "tool": "nope"},
                {"id": "a", "tool": "generate_sql"},
            ],
        }
    )
    fixed, notes = repair_plan(plan, TOOLS)
    assert [n.id for n in fixed.nodes] == ["a"] and fixed.nodes[0].children == []
    assert notes == [
        "dropped node 'b': unknown tool 'nope'",
        "dropped a second node with id 'a'",
        "dropped link 'a' -> 'a': no such node",
        "dropped link 'a' -> 'b': no such node",
        "dropped link 'a' -> 'ghost': no such node",
    ]


def test_truncated_plan_json_is_repaired_without_reasking(demo_db, demo_tasks):
    script = demo_script("figure3")
    script["plan"] = [GOOD_PLAN[:-3]]  # cut off mid-structure
    result, llm = run(demo_db, demo_tasks["figure3"], script)
    assert result.accepted is True
    assert len(llm.prompts("plan")) == 1


def test_plan_that_stays_invalid_falls_back_to_the_default_plan(demo_db, demo_tasks):
    script = demo_script("figure3")
    script["plan"] = ["nope", '{"cursor": ', "still not a plan"]
    result, llm = run(demo_db, demo_tasks["figure3"], script, json_retries=2, scaled_budget=False)

    failed = events(result, "plan_failed")
    assert len(failed) == 1 and "no usable reply after 3 attempts" in failed[0].data["reason"]
    assert len(llm.prompts("plan")) == 3  # one ask + the default 2 re-asks
    # the default plan starts with ambiguity detection, so the story goes on
    assert result.accepted is True


def test_choice_of_unknown_node_falls_back_to_the_first_branch_without_a_second_call(
    demo_db, demo_tasks
):
    script = demo_script("figure3")
    script["choose"] = [json.dumps({"cursor": "n7", "reason": "?"})] * 3
    result, llm = run(demo_db, demo_tasks["figure3"], script)

    assert len(llm.prompts("choose")) == 1
    failed = events(result, "choice_failed")
    assert len(failed) == 1 and failed[0].data["cursor"] == "n1.1"
    assert "cursor 'n7' is not one of ['n1.1', 'n1.2']" in failed[0].data["reason"]
    assert result.accepted is True  # n1.1 refused, backtrack, n1.2 accepted


def test_choose_schema_only_admits_the_open_branches(demo_db, demo_tasks):
    script = demo_script("figure3")
    _, llm = run(demo_db, demo_tasks["figure3"], script)
    request = next(r for r in llm.requests if r.purpose == "choose")
    cursor = request.json_schema["properties"]["cursor"]
    assert cursor["enum"] == ["n1.1", "n1.2"]
    # the reason is written before the choice
    assert request.json_schema["required"] == ["reason", "cursor"]


def test_judge_naming_an_unknown_backtrack_target_is_reasked(demo_db, demo_tasks):
    script = judge_story()
    reject = json.loads(script["judge"][0])
    script["judge"] = [json.dumps({**reject, "backtrack_to": "n42"}), *script["judge"]]
    result, llm = run(demo_db, demo_tasks["figure3"], script)

    assert "backtrack_to 'n42' is not an executed node" in llm.prompts("judge")[1]
    assert result.accepted is True


def test_judge_that_never_answers_rejects_and_the_engine_backtracks(demo_db, demo_tasks):
    script = judge_story()
    script["judge"] = ['{"verdict": "maybe"}'] * 3 + script["judge"][1:]
    result, _ = run(demo_db, demo_tasks["figure3"], script, scaled_budget=False)

    assert events(result, "judge_failed")
    first = events(result, "judgement")[0]
    assert first.data["verdict"] == "reject" and first.data["by"] == "engine"
    assert "judge failed" in first.summary
    backtrack = events(result, "backtrack")[0]
    assert backtrack.data.model_dump() == {"to": "n1", "by": "engine"}
    assert result.accepted is True


def test_a_candidate_that_does_not_execute_is_repaired_never_judged(demo_db, demo_tasks):
    script = demo_script("figure3")
    script["generate_sql"] = [
        json.dumps({"sql": "SELECT room_id FROM no_such_table", "rationale": "x"}),
        script["generate_sql"][1],
    ]
    script["fix_syntax"] = [json.dumps({"sql": "SELECT room_id FROM still_no_table"})]
    accept = script["judge"][0]
    script["judge"] = [accept, accept]
    result, llm = run(demo_db, demo_tasks["figure3"], script)

    first = events(result, "judgement")[0]
    assert first.node == "n1.1.fix" and first.data["by"] == "engine"
    assert "the repair does not run either" in first.summary
    assert len(llm.prompts("judge")) == 1  # only the candidate that runs was judged
    assert result.accepted is True
    assert "no_such_table" not in result.sql


def test_new_nodes_with_a_cycle_are_refused(demo_db, demo_tasks):
    script = judge_story()
    reject = json.loads(script["judge"][0])
    cyclic = [
        {"id": "m1", "tool": "run_sql", "input": {"sql": "SELECT 1"}, "children": ["m2"]},
        {"id": "m2", "tool": "generate_sql", "children": ["m1"]},
    ]
    script["judge"] = [json.dumps({**reject, "new_nodes": cyclic}), *script["judge"]]
    result, llm = run(demo_db, demo_tasks["figure3"], script)
    assert "new_nodes:" in llm.prompts("judge")[1]
    assert result.accepted is True


def test_grafted_nodes_run_after_backtracking(demo_db, demo_tasks):
    script = judge_story()
    reject = json.loads(script["judge"][0])
    graft = [
        {
            "id": "g1",
            "description": "look at the booking times",
            "tool": "run_sql",
            "input": {"sql": "SELECT room_id, start_time, end_time FROM bookings"},
            "children": [],
        }
    ]
    script["judge"][0] = json.dumps({**reject, "new_nodes": graft})
    script["choose"].append(json.dumps({"cursor": "n1.2", "reason": "the time ranges matter"}))
    result, _ = run(demo_db, demo_tasks["figure3"], script)

    nodes = {n["id"]: n for n in result.tree}
    assert nodes["g1"]["parent"] == "n1"
    assert events(result, "grafted")[0].data["children"] == ["g1"]
    assert result.accepted is True


def test_tool_with_invalid_input_fails_its_node_only(demo_db, demo_tasks):
    script = demo_script("figure1")
    plan = json.loads(script["plan"][0])
    plan["nodes"][0]["input"] = {"table": "order_lines", "columns": 5}  # not a list
    script["plan"] = [json.dumps(plan)]
    result, _ = run(demo_db, demo_tasks["figure1"], script)

    n1 = {n["id"]: n for n in result.tree}["n1"]
    assert n1["status"] == "failed"
    assert "invalid input for inspect_columns" in n1["reason"]
    assert result.accepted is True


def test_running_out_of_scripted_replies_ends_the_run_cleanly(demo_db, demo_tasks):
    script = demo_script("figure3")
    del script["judge"]
    result, _ = run(demo_db, demo_tasks["figure3"], script)
    assert result.accepted is False
    assert "LLM backend failed" in result.reason and "judge" in result.reason
