"""The plan tree: validation, grafting, pruning, paths."""

from __future__ import annotations

import pytest

from acts_sql.engine.tree import NodeStatus, PlanTree, PlanValidationError, check_plan
from acts_sql.protocol import Plan, PlanNode
from acts_sql.tools.registry import TOOLS


def node(id_, tool="generate_sql", children=()):
    return PlanNode(id=id_, tool=tool, children=list(children))


def tree_of(*nodes, cursor="a"):
    return PlanTree.from_plan(Plan(cursor=cursor, nodes=list(nodes)), TOOLS)


@pytest.mark.parametrize(
    ("nodes", "cursor", "message"),
    [
        ([node("a"), node("a")], "a", "duplicate node id 'a'"),
        ([node("a", tool="sql_magic")], "a", "unknown tool 'sql_magic'"),
        ([node("a", children=["b"])], "a", "unknown child 'b'"),
        ([node("a", children=["a"])], "a", "lists itself as a child"),
        ([node("a", children=["c"]), node("b", children=["c"]), node("c")], "a", "two parents"),
        ([node("a", children=["b"]), node("b", children=["a"])], "a", "cycle in children"),
        ([node("a")], "zz", "cursor 'zz' names no node"),
        ([node("a", children=["b"]), node("b")], "b", "must be the root"),
    ],
)
def test_invalid_plans_are_refused_with_a_reason(nodes, cursor, message):
    with pytest.raises(PlanValidationError, match=message):
        check_plan(Plan(cursor=cursor, nodes=nodes), TOOLS)


def test_nodes_unreachable_from_the_cursor_are_chained_after_the_node_listed_before():
    tree = tree_of(node("a", "detect_ambiguities", ["b"]), node("b"), node("orphan"))
    assert list(tree.nodes) == ["a", "b", "orphan"]
    assert tree["b"].parent == "a" and tree["b"].depth == 2
    assert tree["orphan"].parent == "b" and tree["orphan"].origin == "plan:chained"


def test_a_flat_plan_runs_in_the_order_given():
    tree = tree_of(node("a", "inspect_columns"), node("b", "run_sql"), node("c"))
    assert [n.parent for n in tree.nodes.values()] == [None, "a", "b"]
    assert tree["a"].children == ["b"] and tree["b"].children == ["c"]


def test_an_orphan_keeps_its_own_subtree_when_chained():
    tree = tree_of(
        node("a", "detect_ambiguities"), node("x", "run_sql", ["y"]), node("y"), node("z")
    )
    assert tree["x"].parent == "a" and tree["y"].parent == "x"
    assert tree["z"].parent == "y"  # chained under the node listed just before it


def test_prune_branch_marks_the_subtree_below_the_common_ancestor():
    tree = tree_of(
        node("a", "detect_ambiguities", ["b", "c"]),
        node("b", "run_sql", ["b1"]),
        node("b1"),
        node("c"),
    )
    tree["a"].status = NodeStatus.DONE
    tree["b"].status = NodeStatus.DONE
    tree["b1"].status = NodeStatus.REJECTED
    pruned = tree.prune_branch("b1", "a", "wrong reading")
    assert pruned == ["b"]
    assert tree["b"].status == NodeStatus.PRUNED and tree["b"].reason == "wrong reading"
    assert tree["b1"].status == NodeStatus.REJECTED  # keeps its own verdict
    assert tree["c"].status == NodeStatus.PENDING
    assert [n.id for n in tree.pending_children("a")] == ["c"]


def test_graft_attaches_a_forest_and_refuses_clashing_ids():
    tree = tree_of(node("a", "detect_ambiguities"))
    tops = tree.graft("a", [node("x", "run_sql", ["y"]), node("y")], TOOLS, origin="judge")
    assert tops == ["x"]
    assert tree["y"].parent == "x" and tree["y"].depth == 3
    with pytest.raises(PlanValidationError, match="duplicate node id 'x'"):
        tree.graft("a", [node("x")], TOOLS, origin="judge")


def test_fresh_ids_never_clash():
    tree = tree_of(node("a", "detect_ambiguities"))
    tree.add_child("a", node("a.gen"), origin="engine")
    assert tree.fresh_id("a.gen") == "a.gen2"
    assert tree.fresh_id("a.fix") == "a.fix"


def step(id_, tool, children=(), **input_):
    return PlanNode(id=id_, tool=tool, children=list(children), input=input_)


def test_a_flat_plan_leaves_out_an_inspection_its_path_already_took():
    col = {"table": "fact_collection", "column": "set_key"}
    tree = tree_of(
        step("a", "inspect_columns", **col),
        step("b", "inspect_columns", table="fact_collection", column="start_date_key"),
        step("c", "inspect_columns", **col),  # the same as a, on a's path
        step("d", "run_sql", sql="SELECT 1"),
        step("e", "run_sql", sql="SELECT   1"),  # whitespace aside, the same as d
        step("f", "inspect_columns", **col),
        node("g"),
    )
    assert list(tree.nodes) == ["a", "b", "d", "g"]
    assert tree.repeats == {"c": "a", "e": "d", "f": "a"}
    assert [tree[n].depth for n in tree.nodes] == [1, 2, 3, 4]
    assert tree["d"].children == ["g"] and tree["b"].children == ["d"]


def test_a_repeat_on_another_branch_is_kept():
    col = {"table": "t", "column": "c"}
    tree = tree_of(
        step("a", "detect_ambiguities", ["b", "c"]),
        step("b", "inspect_columns", **col),
        step("c", "inspect_columns", ["c1"], **col),  # a sibling, not on b's path
        step("c1", "inspect_columns", **col),  # on c's path: left out
        step("x", "generate_sql", hypothesis="h"),
    )
    assert "b" in tree and "c" in tree and "c1" not in tree
    assert tree.repeats == {"c1": "c"} and tree["c"].children == ["x"]
    again = tree_of(step("a", "inspect_columns", ["b"], **col), step("b", "run_sql", sql="x"))
    assert list(again.nodes) == ["a", "b"]  # another tool is another step


def test_generated_steps_are_never_left_out_as_repeats():
    fixes = [node("c", "split_fix_syntax"), node("d", "split_fix_syntax")]
    tree = tree_of(node("a"), node("b"), *fixes)
    assert list(tree.nodes) == ["a", "b", "c", "d"] and tree.repeats == {}


def test_a_graft_leaves_out_what_the_target_path_already_took():
    tree = tree_of(step("a", "inspect_columns", table="t", column="c"))
    tops = tree.graft(
        "a",
        [step("x", "inspect_columns", table="t", column="c"), step("y", "run_sql", sql="q")],
        TOOLS,
        origin="judge",
    )
    assert tops == ["y"] and tree.repeats == {"x": "a"} and tree["a"].children == ["y"]


def test_a_linked_chain_of_repeats_collapses_and_its_children_move_up():
    """PostgreSQL_105 with the 1.5B: n1 and n3-n6 all inspect one column, each linked to
    the next; the candidate step came at depth 7."""
    col = {"table": "fact_collection", "column": "set_key"}
    tree = tree_of(
        step("n1", "inspect_columns", ["n2"], **col),
        step("n2", "inspect_columns", ["n3"], table="fact_collection", column="start_date_key"),
        step("n3", "inspect_columns", ["n4"], **col),
        step("n4", "inspect_columns", ["n5"], **col),
        step("n5", "inspect_columns", ["n6", "n7"], **col),
        step("n6", "inspect_columns", **col),
        node("n7"),
        cursor="n1",
    )
    assert list(tree.nodes) == ["n1", "n2", "n7"]
    assert tree.repeats == {"n3": "n1", "n4": "n1", "n5": "n1", "n6": "n1"}
    assert tree["n2"].children == ["n7"] and tree["n7"].parent == "n2"
    assert tree["n7"].depth == 3
