"""Rule firings as trace events (the chain reports them; the engine records them)."""

from __future__ import annotations

from collections.abc import Callable

from acts_sql.engine.events import RuleFiredData
from acts_sql.engine.trace import Trace
from acts_sql.tools.rule_chain import Firing


def rule_events(trace: Trace, node: str | None) -> Callable[[Firing], None]:
    """A chain's `on_fire` that records each firing as a `rule_fired` trace event."""

    def emit(firing: Firing) -> None:
        summary = f"{firing.rule} ({firing.stage}): {firing.status}"
        trace.emit(RuleFiredData(**firing.model_dump()), node=node, summary=summary)

    return emit
