"""The plan tree: nodes with their status, validation, grafting and pruning.

The agent's plan (protocol `Plan`) becomes a PlanTree. Validation rejects what
would make the search ill-defined: duplicate ids, unknown tools, children that
name no node, a node with two parents, cycles, a cursor that points nowhere.
Its messages are fed back to the agent when it is re-asked.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field

from acts_sql.protocol import Plan, PlanNode

REPEATABLE_EVIDENCE = frozenset({"inspect_columns", "run_sql"})
"""Tools whose step, given the same input, finds the same thing again on one path."""


class NodeStatus(StrEnum):
    PENDING = "pending"
    DONE = "done"
    FAILED = "failed"
    SKIPPED = "skipped"
    ACCEPTED = "accepted"
    REJECTED = "rejected"
    PRUNED = "pruned"


EXECUTED = {NodeStatus.DONE, NodeStatus.FAILED, NodeStatus.SKIPPED}


class NodeState(BaseModel):
    """A node of the tree with what happened to it."""

    id: str
    description: str = ""
    tool: str
    input: dict[str, Any] = Field(default_factory=dict)
    children: list[str] = Field(default_factory=list)
    parent: str | None = None
    depth: int = 1
    origin: str = "plan"
    status: NodeStatus = NodeStatus.PENDING
    summary: str = ""
    reason: str = ""
    candidate_sql: str | None = None


class PlanValidationError(Exception):
    """A plan or a graft that breaks the tree rules; the message says which."""


def check_nodes(
    nodes: list[PlanNode], known_tools: Iterable[str], taken: Iterable[str] = ()
) -> None:
    """Raise PlanValidationError unless `nodes` form a forest of known tools."""
    known = set(known_tools)
    taken_ids = set(taken)
    ids: set[str] = set()
    for node in nodes:
        if node.id in ids or node.id in taken_ids:
            raise PlanValidationError(f"duplicate node id {node.id!r}")
        ids.add(node.id)
        if node.tool not in known:
            raise PlanValidationError(
                f"node {node.id!r} uses unknown tool {node.tool!r}; "
                f"tools: {', '.join(sorted(known))}"
            )
    parent_of: dict[str, str] = {}
    for node in nodes:
        for child in node.children:
            if child not in ids:
                raise PlanValidationError(f"node {node.id!r} has unknown child {child!r}")
            if child == node.id:
                raise PlanValidationError(f"node {node.id!r} lists itself as a child (cycle)")
            if child in parent_of and parent_of[child] != node.id:
                raise PlanValidationError(
                    f"node {child!r} has two parents ({parent_of[child]!r}, {node.id!r})"
                )
            parent_of[child] = node.id
    for node in nodes:
        seen = {node.id}
        current = parent_of.get(node.id)
        while current is not None:
            if current in seen:
                raise PlanValidationError(f"cycle in children through node {node.id!r}")
            seen.add(current)
            current = parent_of.get(current)


def check_plan(plan: Plan, known_tools: Iterable[str]) -> None:
    check_nodes(plan.nodes, known_tools)
    ids = {n.id for n in plan.nodes}
    if plan.cursor not in ids:
        raise PlanValidationError(
            f"cursor {plan.cursor!r} names no node; nodes: {', '.join(sorted(ids))}"
        )
    children = {c for n in plan.nodes for c in n.children}
    if plan.cursor in children:
        raise PlanValidationError(f"cursor {plan.cursor!r} must be the root node, not a child")


def repair_plan(plan: Plan, known_tools: Iterable[str]) -> tuple[Plan, list[str]]:
    """A plan that passes `check_plan`, made from a flawed one without asking again.

    Weak planners write plans that are nearly right; re-asking costs a whole
    plan's worth of tokens and often returns the same flaw. Repairs, each
    reported: a node with an unknown tool or a repeated id is dropped; a link
    to a node that does not exist, to itself, to a second parent or back up
    its own chain (a cycle) is dropped; a cursor that names no node, or names
    a child, moves to the first node that has no parent. None is possible only
    when no node is left (then the caller falls back to asking again).
    """
    known = set(known_tools)
    notes: list[str] = []
    nodes: list[PlanNode] = []
    seen: set[str] = set()
    for node in plan.nodes:
        if node.tool not in known:
            notes.append(f"dropped node {node.id!r}: unknown tool {node.tool!r}")
        elif node.id in seen:
            notes.append(f"dropped a second node with id {node.id!r}")
        else:
            seen.add(node.id)
            nodes.append(node.model_copy(update={"children": list(node.children)}))
    parent_of: dict[str, str] = {}
    for node in nodes:
        kept = []
        for child in node.children:
            if child not in seen or child == node.id:
                notes.append(f"dropped link {node.id!r} -> {child!r}: no such node")
            elif child in parent_of:
                notes.append(f"dropped link {node.id!r} -> {child!r}: it has a parent")
            elif _ancestor(parent_of, node.id, child):
                notes.append(f"dropped link {node.id!r} -> {child!r}: a cycle")
            else:
                parent_of[child] = node.id
                kept.append(child)
        node.children = kept
    if not nodes:
        return plan, notes
    cursor = plan.cursor
    if cursor not in seen or cursor in parent_of:
        cursor = next(n.id for n in nodes if n.id not in parent_of)
        notes.append(f"cursor {plan.cursor!r} moved to the root {cursor!r}")
    return Plan(cursor=cursor, nodes=nodes), notes


def _ancestor(parent_of: dict[str, str], node: str, candidate: str) -> bool:
    """Whether `candidate` is `node` or above it by the links kept so far."""
    current: str | None = node
    while current is not None:
        if current == candidate:
            return True
        current = parent_of.get(current)
    return False


class PlanTree:
    """Nodes by id, in insertion order, with parent links and depths."""

    def __init__(self) -> None:
        self.nodes: dict[str, NodeState] = {}
        self.root: str | None = None
        self.repeats: dict[str, str] = {}
        """Planned steps left out, each with the node on its path that takes it already."""

    @classmethod
    def from_plan(cls, plan: Plan, known_tools: Iterable[str]) -> PlanTree:
        """Build from a validated plan.

        Nodes that no link reaches from the cursor are not dropped: a weak
        planner often lists its steps flat, with empty `children`. Each such
        node (with the subtree its own links give it) is chained under the node
        listed just before it that is already in the tree, so a flat list runs
        in the order given.
        """
        check_plan(plan, known_tools)
        tree = cls()
        tree.root = plan.cursor
        tree._insert_subtree(plan, plan.cursor, None, origin="plan")
        previous = plan.cursor
        for node in plan.nodes:
            if node.id in tree.nodes:
                previous = node.id
                continue
            top = _top_of(plan, node.id)
            if top in tree.nodes or top in tree.repeats:
                continue
            tree.nodes[previous].children.append(top)
            tree._insert_subtree(plan, top, previous, origin="plan:chained")
            previous = node.id if node.id in tree.nodes else previous
        return tree

    def _insert_subtree(self, plan: Plan, top: str, parent: str | None, origin: str) -> None:
        self._insert_forest({n.id: n for n in plan.nodes}, [top], parent, origin)

    def _insert_forest(
        self, by_id: dict[str, PlanNode], tops: list[str], parent: str | None, origin: str
    ) -> None:
        """Insert `tops` (already listed among `parent`'s children) and their descendants.

        A node that repeats an evidence step of its own path (see :meth:`repeat_of`) is
        left out and its children take its place under its parent."""
        stack: list[tuple[str, str | None]] = [(top, parent) for top in reversed(tops)]
        while stack:
            node_id, under = stack.pop()
            node = by_id[node_id]
            same = self.repeat_of(node, under)
            if same is not None and under is not None:
                siblings = self.nodes[under].children
                at = siblings.index(node_id)
                siblings[at : at + 1] = node.children
                self.repeats[node_id] = same
                stack.extend((c, under) for c in reversed(node.children))
                continue
            self._insert(node, under, origin=origin)
            stack.extend((c, node_id) for c in reversed(node.children))

    def repeat_of(self, node: PlanNode, parent: str | None) -> str | None:
        """The node on the path down to `parent` that already took `node`'s step.

        Only a tool in :data:`REPEATABLE_EVIDENCE` with the same input (whitespace
        aside) counts: it would read the same rows again, costing a node, a level of
        depth and prompt length. Weak planners list one inspection several times
        (six `inspect_columns` of one column in one plan)."""
        if node.tool not in REPEATABLE_EVIDENCE:
            return None
        key = _step_key(node.tool, node.input)
        current = parent
        while current is not None:
            state = self.nodes[current]
            if _step_key(state.tool, state.input) == key:
                return current
            current = state.parent
        return None

    def _insert(self, node: PlanNode, parent: str | None, origin: str) -> NodeState:
        depth = 1 if parent is None else self.nodes[parent].depth + 1
        state = NodeState(
            id=node.id,
            description=node.description,
            tool=node.tool,
            input=dict(node.input),
            children=list(node.children),
            parent=parent,
            depth=depth,
            origin=origin,
        )
        self.nodes[node.id] = state
        return state

    def __getitem__(self, node_id: str) -> NodeState:
        return self.nodes[node_id]

    def __contains__(self, node_id: object) -> bool:
        return node_id in self.nodes

    def __len__(self) -> int:
        return len(self.nodes)

    def add_child(self, parent: str, node: PlanNode, origin: str) -> NodeState:
        """Append one new leaf under `parent`."""
        if node.id in self.nodes:
            raise PlanValidationError(f"duplicate node id {node.id!r}")
        self.nodes[parent].children.append(node.id)
        return self._insert(node.model_copy(update={"children": []}), parent, origin)

    def graft(
        self, parent: str, nodes: list[PlanNode], known_tools: Iterable[str], origin: str
    ) -> list[str]:
        """Attach a forest of new nodes under `parent`; returns the new top-level ids."""
        check_nodes(nodes, known_tools, taken=self.nodes)
        by_id = {n.id: n for n in nodes}
        referenced = {c for n in nodes for c in n.children}
        tops = [n.id for n in nodes if n.id not in referenced]
        before = len(self.nodes[parent].children)
        self.nodes[parent].children.extend(tops)
        self._insert_forest(by_id, tops, parent, origin)
        return self.nodes[parent].children[before:]

    def fresh_id(self, base: str) -> str:
        if base not in self.nodes:
            return base
        k = 2
        while f"{base}{k}" in self.nodes:
            k += 1
        return f"{base}{k}"

    def path(self, node_id: str) -> list[NodeState]:
        """Nodes from the root down to `node_id`, inclusive."""
        chain = []
        current: str | None = node_id
        while current is not None:
            chain.append(self.nodes[current])
            current = self.nodes[current].parent
        return list(reversed(chain))

    def pending_children(self, node_id: str) -> list[NodeState]:
        return [
            self.nodes[c]
            for c in self.nodes[node_id].children
            if self.nodes[c].status == NodeStatus.PENDING
        ]

    def subtree(self, node_id: str) -> list[str]:
        out, stack = [], [node_id]
        while stack:
            current = stack.pop()
            out.append(current)
            stack.extend(reversed(self.nodes[current].children))
        return out

    def prune_branch(self, rejected: str, target: str, reason: str) -> list[str]:
        """Prune from the common ancestor of `rejected` and `target` down to `rejected`.

        The child of the common ancestor on the way to `rejected` and its whole
        subtree are marked pruned (the rejected node keeps `rejected`).
        Returns the ids newly pruned.
        """
        target_path = {n.id for n in self.path(target)}
        branch_top = rejected
        for node in reversed(self.path(rejected)[:-1]):
            if node.id in target_path:
                break
            branch_top = node.id
        pruned = []
        for node_id in self.subtree(branch_top):
            node = self.nodes[node_id]
            if node.status in (NodeStatus.REJECTED, NodeStatus.ACCEPTED, NodeStatus.PRUNED):
                continue
            node.status = NodeStatus.PRUNED
            node.reason = reason
            pruned.append(node_id)
        return pruned

    def to_prompt_lines(self, current: str | None) -> str:
        """The tree as indented lines (id, tool, status, description, short result)."""
        lines: list[str] = []
        if self.root is None:
            return "(empty)"
        stack: list[tuple[str, int]] = [(self.root, 0)]
        while stack:
            node_id, level = stack.pop()
            node = self.nodes[node_id]
            mark = " <- here" if node_id == current else ""
            text = f"{'  ' * level}{node.id} {node.tool} [{node.status.value}]{mark}"
            if node.description:
                text += f": {_clip(node.description, 120)}"
            if node.status in (NodeStatus.REJECTED, NodeStatus.PRUNED) and node.reason:
                text += f" (why: {_clip(node.reason, 160)})"
            lines.append(text)
            stack.extend((c, level + 1) for c in reversed(node.children))
        return "\n".join(lines)

    def plan_nodes(self) -> list[dict[str, Any]]:
        """The nodes as a plan lists them (id, description, tool, input, children)."""
        return [
            {
                "id": n.id,
                "description": n.description,
                "tool": n.tool,
                "input": dict(n.input),
                "children": list(n.children),
            }
            for n in self.nodes.values()
        ]

    def snapshot(self) -> list[dict[str, Any]]:
        return [n.model_dump(mode="json") for n in self.nodes.values()]


def _step_key(tool: str, step_input: dict[str, Any]) -> str:
    """A step's tool and input, strings with their whitespace collapsed."""
    same = {k: " ".join(v.split()) if isinstance(v, str) else v for k, v in step_input.items()}
    return tool + json.dumps(same, sort_keys=True, default=str)


def _top_of(plan: Plan, node_id: str) -> str:
    """The topmost ancestor of `node_id` by the plan's own links."""
    parent_of = {c: n.id for n in plan.nodes for c in n.children}
    current = node_id
    while current in parent_of:
        current = parent_of[current]
    return current


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
