"""The schemas the agent sends with its requests: bounded, so a weak model cannot run on.

A backend that constrains its output by the schema (the local model's grammar, a vLLM
server) then writes at most a few nodes with known tools, and reasons short enough that
the fields after them are reached.
"""

from __future__ import annotations

import json

from acts_sql import Budget, CorrectionOptions, correct
from acts_sql.agent.central_agent import (
    PLAN_MAX_NODES,
    REASON_CHARS,
    choose_schema,
    judge_schema,
    plan_schema,
)
from acts_sql.protocol import Plan
from support import scripted

TOOLS = ["detect_ambiguities", "generate_sql"]


def test_the_plan_schema_names_only_the_enabled_tools_and_bounds_the_plan():
    schema = plan_schema(TOOLS)
    nodes = schema["properties"]["nodes"]
    assert nodes["maxItems"] == PLAN_MAX_NODES and nodes["minItems"] == 1
    node = nodes["items"]["properties"]
    assert node["tool"]["enum"] == TOOLS
    assert node["input"]["additionalProperties"]["type"] == "string"
    assert all(node[k]["maxLength"] for k in ("id", "description"))
    # a plan written to the schema is a valid Plan
    example = {
        "cursor": "n1",
        "nodes": [
            {"id": "n1", "description": "d", "tool": "generate_sql", "input": {}, "children": []}
        ],
    }
    assert Plan.model_validate(example).nodes[0].tool == "generate_sql"


def test_reasons_are_bounded_in_the_choose_and_judge_schemas():
    assert choose_schema(["n1.1"])["properties"]["reason"]["maxLength"] == REASON_CHARS["choose"]
    judge = judge_schema(["A"], ["n1"])["properties"]["reason"]
    assert judge["maxLength"] == REASON_CHARS["judge"]


def test_the_plan_request_carries_the_bounded_schema(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    llm = scripted({"plan": ["not json"] * 3, "correct": ["no sql here"]})
    correct(
        demo_db,
        task.question,
        task.sql,
        llm=llm,
        options=CorrectionOptions(budget=Budget(max_llm_calls=3)),
    )
    plan = next(r for r in llm.requests if r.purpose == "plan")
    sent = plan.json_schema or {}
    assert sent["properties"]["nodes"]["maxItems"] == PLAN_MAX_NODES
    tools = sent["properties"]["nodes"]["items"]["properties"]["tool"]["enum"]
    assert "generate_sql" in tools and "split_fix_syntax" in tools
    assert json.dumps(sent)  # serialisable as sent to an endpoint
