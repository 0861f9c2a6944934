"""Tools on the real demo database, with a scripted LLM where they need one."""

from __future__ import annotations

import json

import pytest

from acts_sql.db.connect import open_database
from acts_sql.demo import demo_db_path
from acts_sql.prompts.context import TaskContext
from acts_sql.tools.base import ToolCall, ToolEnv
from acts_sql.tools.registry import TOOLS, run_tool, tool_list
from support import scripted


def env(script=None, original_sql="SELECT 1", **kw):
    executor = open_database(str(demo_db_path()))
    task = TaskContext(
        dialect="sqlite",
        question="q",
        original_sql=original_sql,
        schema_text="-",
        schema_names={t.name: [c.name for c in t.columns] for t in executor.reflect(0)},
        tool_list=tool_list(),
    )
    return ToolEnv(executor=executor, llm=scripted(script or {}), task=task, **kw)


def test_registry_has_the_five_tools_in_order():
    assert list(TOOLS) == [
        "detect_ambiguities",
        "inspect_columns",
        "run_sql",
        "split_fix_syntax",
        "generate_sql",
    ]


def test_inspect_columns_shows_the_stored_values():
    outcome = run_tool(
        "inspect_columns", env(), ToolCall(node_id="n1", input={"columns": ["products.category"]})
    )
    assert outcome.status == "done"
    report = outcome.output.dump()["columns"][0]
    values = [v["value"] for v in report["top_values"]]
    assert "Electronics" not in values
    assert any("Electronics" in v for v in values)
    assert report["total_rows"] == 24 and report["null_share"] == 0
    assert outcome.summary.startswith("products.category: 24 rows, 0% null")


def test_inspect_columns_without_a_column_looks_at_the_users_condition_columns_first():
    user_sql = (
        "SELECT p.name, SUM(s.quantity) FROM products AS p JOIN sales AS s"
        " ON s.product_id = p.product_id WHERE p.category = 'Electronics' GROUP BY p.name"
    )
    outcome = run_tool(
        "inspect_columns", env(original_sql=user_sql), ToolCall(node_id="n1", input={})
    )
    assert outcome.status == "done"
    inspected = [(r["table"], r["column"]) for r in outcome.output.dump()["columns"]]
    assert inspected == [
        ("sales", "product_id"),
        ("products", "product_id"),
        ("products", "category"),
        ("products", "name"),
    ]  # the join and the filter before the selected columns; at most four


@pytest.mark.parametrize(
    ("user_sql", "expected"),
    [
        (
            "UPDATE products SET unit_price = unit_price * 2 WHERE category = 'Electronics'",
            {("products", "category"), ("products", "unit_price")},
        ),
        (
            "DELETE FROM sales WHERE product_id IN (SELECT product_id FROM products"
            " WHERE category = 'Toys')",
            {("sales", "product_id"), ("products", "product_id"), ("products", "category")},
        ),
        (
            "UPDATE sales AS s SET quantity = 0 FROM products AS p"
            " WHERE s.product_id = p.product_id AND p.name = 'x'",
            {("sales", "product_id"), ("products", "product_id"), ("products", "name")},
        ),
    ],
)
def test_inspect_columns_without_a_column_reads_an_update_or_delete_too(user_sql, expected):
    outcome = run_tool(
        "inspect_columns", env(original_sql=user_sql), ToolCall(node_id="n1", input={})
    )
    assert outcome.status == "done", outcome.summary
    inspected = {(r["table"], r["column"]) for r in outcome.output.dump()["columns"]}
    assert expected <= inspected


def test_inspect_columns_without_a_column_or_a_readable_sql_fails_saying_what_to_give():
    outcome = run_tool("inspect_columns", env(), ToolCall(node_id="n1", input={}))
    assert outcome.status == "failed"
    assert "give `column` or `columns`" in outcome.summary


def test_inspect_columns_on_a_missing_column_fails_with_the_database_error():
    outcome = run_tool(
        "inspect_columns",
        env(),
        ToolCall(node_id="n1", input={"table": "products", "column": "colour"}),
    )
    assert outcome.status == "failed"
    assert "no such column" in outcome.summary


def test_run_sql_is_read_only():
    outcome = run_tool("run_sql", env(), ToolCall(node_id="n1", input={"sql": "DELETE FROM rooms"}))
    assert outcome.status == "done"  # the tool ran; the statement was blocked
    assert outcome.output.dump()["result"]["status"] == "blocked"
    assert "writes are not allowed" in outcome.summary


def test_detect_ambiguities_keeps_at_most_three_readings_and_drops_empty_ones():
    reply = {
        "ambiguities": [
            {"phrase": "top", "interpretations": ["a", "b", "", "c", "d", "a"]},
            {"phrase": " ", "interpretations": ["x"]},
        ]
    }
    outcome = run_tool(
        "detect_ambiguities", env({"detect_ambiguities": [reply]}), ToolCall(node_id="n1")
    )
    assert outcome.output.dump() == {
        "ambiguities": [{"phrase": "top", "interpretations": ["a", "b", "c"]}]
    }


def test_generate_sql_executes_its_candidate():
    e = env(
        {
            "generate_sql": [
                {"sql": "SELECT name FROM rooms ORDER BY room_id LIMIT 2;", "rationale": ""}
            ]
        }
    )
    outcome = run_tool("generate_sql", e, ToolCall(node_id="n1", input={"hypothesis": "h"}))
    assert outcome.candidate_sql == "SELECT name FROM rooms ORDER BY room_id LIMIT 2"
    assert outcome.candidate_result.rows == [["Atlas"], ["Borealis"]]
    # the hypothesis reaches the prompt
    assert "Hypothesis this branch follows: h" in e.llm.prompts("generate_sql")[0]


def test_split_fix_syntax_uses_sqlglot_units_for_a_schema_error():
    sql = (
        "WITH per_room AS (SELECT room_id, COUNT(*) AS n FROM bookings GROUP BY room_id) "
        "SELECT r.name, p.nn FROM rooms AS r JOIN per_room AS p ON p.room_id = r.room_id"
    )
    fixed = sql.replace("p.nn", "p.n")
    e = env({"fix_syntax": [{"sql": fixed}]})
    outcome = run_tool("split_fix_syntax", e, ToolCall(node_id="n1", input={"sql": sql}))

    assert outcome.output.dump()["decomposed_by"] == "sqlglot"
    units = {u["name"]: u for u in outcome.output.dump()["units"]}
    assert units["per_room"]["status"] == "ok"
    assert units["main"]["status"] == "error" and "p.nn" in units["main"]["error"]
    assert units["main"]["depends_on"] == ["per_room"]
    assert outcome.candidate_result.ok
    # the repair prompt carries the per-unit diagnostics
    assert "- main (uses per_room): error" in e.llm.prompts("fix_syntax")[0]
    assert "decompose" not in e.llm.inner.used()


def test_split_fix_syntax_asks_the_llm_to_decompose_a_syntax_error():
    sql = "SELECT room_id, COUNT(*) AS n FROM bookings GROUP BY room_id HAVING"
    units = {"units": [{"name": "main", "sql": sql, "depends_on": []}]}
    e = env({"decompose": [units], "fix_syntax": [{"sql": sql.removesuffix(" HAVING")}]})
    outcome = run_tool("split_fix_syntax", e, ToolCall(node_id="n1", input={"sql": sql}))
    assert outcome.output.dump()["decomposed_by"] == "llm"
    assert outcome.output.dump()["units"][0]["status"] == "error"
    assert outcome.candidate_result.ok and outcome.candidate_result.row_count > 0


def test_split_fix_syntax_reports_a_dependency_whose_columns_are_unknown():
    sql = "SELECT * FROM (SELECT * FROM rooms) AS x WHERE"
    units = {
        "units": [
            {"name": "x", "sql": "SELECT * FROM rooms", "depends_on": []},
            {"name": "main", "sql": "SELECT * FROM x WHERE", "depends_on": ["x"]},
        ]
    }
    e = env({"decompose": [units], "fix_syntax": [{"sql": "SELECT * FROM rooms"}]})
    outcome = run_tool("split_fix_syntax", e, ToolCall(node_id="n1", input={"sql": sql}))
    main = outcome.output.dump()["units"][1]
    assert main["status"] == "unchecked" and "unknown" in main["error"]
    assert json.dumps(outcome.output.dump())  # the output is JSON-safe for the trace
