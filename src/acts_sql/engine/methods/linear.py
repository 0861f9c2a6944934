"""The linear method (the paper's "w/ linear plan"): the tree search narrowed to one path.

Same plan, tools, pools and judge as `TreeSearch`, but an ambiguity becomes one child (its
first reading), the agent is never asked to choose among children (the first untried one
runs), a rejection appends a new `generate_sql` attempt under the rejected node (up to
`linear_retries`) instead of rolling back, there is no re-plan, and the depth limit ends
the run.
"""

from __future__ import annotations

from typing import Any

from acts_sql.engine.methods.base import MethodRun, run_search
from acts_sql.engine.search import SearchOutcome, TreeSearch
from acts_sql.engine.tree import NodeState
from acts_sql.protocol import AmbiguityReport, JudgeDecision, PlanNode, ToolName


class LinearSearch(TreeSearch):
    """One run of the linear method over one task."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._retries_left = self.options.linear_retries

    def _readings(self, report: AmbiguityReport) -> list[tuple[str, str]]:
        return super()._readings(report)[:1]

    def _pick(self, node: NodeState, pending: list[NodeState]) -> str:
        return pending[0].id

    def _replan(self) -> str | None:
        return None

    def _too_deep(self, node: NodeState) -> str | None:
        raise self.budget.depth_exhausted()

    def _backtrack(
        self, node: NodeState, decision: JudgeDecision | None, reason: str
    ) -> str | None:
        """No going back: a new attempt under the rejected node, told the judge's feedback."""
        if self._retries_left <= 0:
            return None
        self._retries_left -= 1
        retry = PlanNode(
            id=self.tree.fresh_id(f"{node.id}.r"),
            description="try again on the same path, with the judge's feedback",
            tool=ToolName.GENERATE_SQL,
            input={"hypothesis": node.input.get("hypothesis", ""), "feedback": self._feedback()},
        )
        return self.tree.add_child(node.id, retry, origin="engine").id


def run(r: MethodRun) -> SearchOutcome:
    return run_search(LinearSearch, r)
