"""The paper's stories, end to end: scripted LLM, real SQLite (the demo database)."""

from __future__ import annotations

from acts_sql import Budget, CorrectionOptions, correct
from acts_sql.sql.query_text import normalize_sql
from support import demo_script, judge_story, scripted, syntax_repair_story


def same_sql(a: str, b: str) -> bool:
    return normalize_sql(a, "sqlite") == normalize_sql(b, "sqlite")


def nodes_by_id(result):
    return {n["id"]: n for n in result.tree}


def test_figure3_refuses_the_users_reading_and_backtracks_to_the_right_one(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    llm = scripted(demo_script("figure3"))
    result = correct(demo_db, task.question, task.sql, llm=llm)

    assert result.accepted is True
    assert same_sql(result.sql, task.right_sql)
    nodes = nodes_by_id(result)
    # the ambiguity node expanded into one branch per interpretation
    assert nodes["n1"]["children"][:2] == ["n1.1", "n1.2"]
    assert nodes["n1.1"]["input"]["hypothesis"].endswith(task.interpretations[0])
    # the first branch's pool: the raw rewrite (the user's SQL) and a rewrite with the
    # user's rows; the engine refuses both before any judge sees them
    assert nodes["n1.1"]["status"] == "rejected"
    assert "same SQL as the user's" in nodes["n1.1"]["reason"]
    assert "rows of the user's SQL" in nodes["n1.1"]["reason"]
    refusals = [e for e in result.trace if e.kind == "refusal"]
    assert [e.node for e in refusals] == ["n1.1", "n1.1"]
    assert nodes["n1.2"]["status"] == "accepted"
    pruned = [e for e in result.trace if e.kind == "pruned"]
    assert len(pruned) == 1 and pruned[0].node == "n1.1"
    backtrack = next(e for e in result.trace if e.kind == "backtrack")
    assert backtrack.data.model_dump() == {"to": "n1", "by": "engine"}
    # every LLM call is recorded with its purpose; the judge saw only n1.2. The raw
    # rewrite is written first (its prompt shares no prefix with the others)
    purposes = [e.purpose for e in result.trace if e.kind == "llm_call"]
    assert purposes == [
        "correct",
        "plan",
        "detect_ambiguities",
        "choose",
        "generate_sql",
        "generate_sql",
        "judge",
    ]
    assert result.usage.llm_calls == 7
    assert result.result is not None and result.result.status == "ok"
    assert [row[0] for row in result.result.rows] == [1, 5]


def test_figure3_judge_rejects_with_a_reason_and_names_the_backtrack_target(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    llm = scripted(judge_story())
    result = correct(demo_db, task.question, task.sql, llm=llm)

    assert result.accepted is True
    nodes = nodes_by_id(result)
    assert nodes["n1.1"]["status"] == "rejected"
    assert "intersect" in nodes["n1.1"]["reason"]
    pruned = [e for e in result.trace if e.kind == "pruned"]
    assert len(pruned) == 1 and "hours apart" in pruned[0].data["reason"]
    backtrack = next(e for e in result.trace if e.kind == "backtrack")
    assert backtrack.data.model_dump() == {"to": "n1", "by": "agent"}
    # the judge wrote its reason before its verdict (the schema's order)
    request = next(r for r in llm.requests if r.purpose == "judge")
    assert request.json_schema["required"][:2] == ["reason", "verdict"]


def test_rejected_candidate_is_not_judged_again(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    script = judge_story()
    # the agent's second attempt repeats the rejected SQL: the engine rejects
    # it without a judge call and goes on with what is left
    script["generate_sql"] = [script["generate_sql"][0]] * 3
    script["judge"] = script["judge"][:1]
    llm = scripted(script)
    result = correct(
        demo_db,
        task.question,
        task.sql,
        llm=llm,
        options=CorrectionOptions(budget=Budget(max_llm_calls=12)),
    )

    judgements = [e for e in result.trace if e.kind == "judgement"]
    assert [j.data["by"] for j in judgements[:2]] == ["agent", "engine"]
    assert "already rejected" in judgements[1].summary
    assert len(llm.prompts("judge")) == 1
    # a greedy answer that repeats a rejected SQL is asked again, told not to repeat it
    retry_prompts = [p for p in llm.prompts("generate_sql") if "Do not repeat these SQL" in p]
    assert retry_prompts
    assert result.accepted is False


def test_syntax_error_is_repaired_by_sqlglot_first_at_no_llm_cost(demo_db, demo_tasks):
    task = demo_tasks["case_5_4"]
    llm = scripted(demo_script("case_5_4"))
    result = correct(demo_db, task.question, task.sql, llm=llm)

    assert result.accepted is True
    assert same_sql(result.sql, task.right_sql)
    winner = next(c for c in result.candidates if c["verdict"] == "accepted")
    assert winner["origin"] == "rule:reparse"  # sqlglot reads past the dangling comma
    assert not llm.prompts("decompose") and not llm.prompts("fix_syntax")


def test_syntax_error_goes_through_split_fix_syntax(demo_db, demo_tasks):
    task = demo_tasks["case_5_4"]
    result = syntax_repair_story(demo_db, task)

    assert result.accepted is True
    assert same_sql(result.sql, task.right_sql)
    nodes = nodes_by_id(result)
    assert nodes["n1.2.fix"]["tool"] == "split_fix_syntax"
    assert nodes["n1.2.fix"]["status"] == "accepted"
    fix_done = next(e for e in result.trace if e.kind == "node_finished" and e.node == "n1.2.fix")
    units = {u["name"]: u for u in fix_done.data["output"]["units"]}
    assert list(units) == ["monthly_sales", "product_sales", "ranked", "main"]
    # only the unit with the broken GROUP BY fails; the others pass on stand-ins
    assert units["product_sales"]["status"] == "error"
    assert all(units[n]["status"] == "ok" for n in ("monthly_sales", "ranked", "main"))
    stand_ins = [
        e.data["sql"] for e in result.trace if e.kind == "statement" and e.purpose == "stand_in"
    ]
    assert any(s.startswith("stand-in monthly_sales(") for s in stand_ins)
    assert any(s.startswith("stand-in product_sales(") for s in stand_ins)
    # the syntax-error candidate itself was not judged
    judged = [e.node for e in result.trace if e.kind == "judgement"]
    assert judged == ["n1.2.fix"]
    assert [e.node for e in result.trace if e.kind == "fix_inserted"] == ["n1.2"]


def test_figure1_inspects_values_before_choosing(demo_db, demo_tasks):
    task = demo_tasks["figure1"]
    llm = scripted(demo_script("figure1"))
    result = correct(demo_db, task.question, task.sql, llm=llm)

    assert result.accepted is True
    assert same_sql(result.sql, task.right_sql)
    inspect = nodes_by_id(result)["n1"]
    assert inspect["status"] == "done" and "Electronics" in inspect["summary"]
    # the chooser saw the inspected values
    assert "Electronics" in llm.prompts("choose")[0]
    assert result.result.rows[0][0] is not None


def test_budget_exhaustion_returns_best_candidate_not_accepted(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    result = correct(
        demo_db,
        task.question,
        task.sql,
        llm=scripted(demo_script("figure3")),
        options=CorrectionOptions(budget=Budget(max_llm_calls=5)),
    )
    assert result.accepted is False
    assert "LLM calls" in result.reason
    # the only candidate seen is the rejected one: it is still the best there is
    assert same_sql(result.sql, task.wrong_sql)
    assert any(e.kind == "budget_exhausted" for e in result.trace)
    assert result.usage.llm_calls == 5


def test_node_budget_stops_the_search(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    result = correct(
        demo_db,
        task.question,
        task.sql,
        llm=scripted(demo_script("figure3")),
        options=CorrectionOptions(budget=Budget(max_nodes=1)),
    )
    assert result.accepted is False
    assert "nodes (1)" in result.reason
    assert result.sql == task.sql  # no candidate yet: the original comes back


def test_linear_method_cannot_reach_the_second_interpretation(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    script = demo_script("figure3")
    script["generate_sql"] = [script["generate_sql"][0]] * 3
    script["judge"] = [script["judge"][0]] * 3

    linear = correct(
        demo_db,
        task.question,
        task.sql,
        llm=scripted(script),
        options=CorrectionOptions(method="linear"),
    )
    tree = correct(demo_db, task.question, task.sql, llm=scripted(demo_script("figure3")))

    assert linear.accepted is False
    assert same_sql(linear.sql, task.wrong_sql)
    linear_nodes = nodes_by_id(linear)
    assert "n1.2" not in linear_nodes  # only the first reading became a child
    assert not [e for e in linear.trace if e.kind in ("backtrack", "choice")]
    # the rejection appended a retry on the same path instead of rolling back
    assert linear_nodes["n1.1.r"]["parent"] == "n1.1"
    assert tree.accepted is True and same_sql(tree.sql, task.right_sql)
