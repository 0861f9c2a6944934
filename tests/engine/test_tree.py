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


def test_prompt_json_carries_status_and_results():
    tree = tree_of(node("a", "detect_ambiguities", ["b"]), node("b"))
    tree["a"].status, tree["a"].summary = NodeStatus.DONE, "x" * 1000
    text = tree.to_prompt_json("b")
    assert '"cursor": "b"' in text and '"status": "done"' in text
    assert "x" * 399 in text and "x" * 401 not in text  # summaries are clipped
