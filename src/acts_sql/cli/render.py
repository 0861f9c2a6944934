"""Human output: the debugging tree, the final SQL and its rows, with rich."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from acts_sql.db.result import ExecResult
from acts_sql.engine.result import CorrectionResult
from acts_sql.engine.trace import TraceEvent

STATUS_STYLE = {
    "accepted": "bold green",
    "rejected": "bold red",
    "pruned": "red",
    "failed": "yellow",
    "skipped": "dim",
    "pending": "dim",
    "done": "cyan",
}
MAX_ROWS_SHOWN = 10


def _first_line(text: str, limit: int = 100) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return _clip(line, limit)


def _one_line(text: str, limit: int = 100) -> str:
    return _clip(" ".join((text or "").split()), limit)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def node_label(node: dict[str, Any]) -> Text:
    status = node.get("status", "pending")
    label = Text()
    label.append(f"{node['id']} ", style="bold")
    label.append(node["tool"], style="magenta")
    if node.get("description"):
        label.append(f"  {_first_line(node['description'], 80)}")
    label.append(f"  [{status}]", style=STATUS_STYLE.get(status, ""))
    if node.get("candidate_sql"):
        label.append(f"\n  sql: {_one_line(node['candidate_sql'], 110)}", style="dim")
    elif node.get("summary"):
        label.append(f"\n  {_first_line(node['summary'], 110)}", style="dim")
    if node.get("reason") and status in ("rejected", "pruned", "failed", "accepted", "skipped"):
        label.append(
            f"\n  why: {_first_line(node['reason'], 110)}", style=STATUS_STYLE.get(status, "")
        )
    return label


def plan_tree(nodes: list[dict[str, Any]]) -> Tree | None:
    if not nodes:
        return None
    by_id = {n["id"]: n for n in nodes}
    root = next((n for n in nodes if n.get("parent") is None), nodes[0])
    tree = Tree(node_label(root))
    stack = [(tree, root)]
    while stack:
        branch, node = stack.pop()
        for child_id in node.get("children", []):
            child = by_id.get(child_id)
            if child is not None:
                stack.append((branch.add(node_label(child)), child))
    return tree


def rows_table(result: ExecResult) -> Table | Text:
    if result.status != "ok":
        return Text(f"{result.status}: {result.error}", style="red")
    table = Table(show_header=True, header_style="bold", show_lines=False)
    for column in result.columns:
        table.add_column(column)
    for row in result.rows[:MAX_ROWS_SHOWN]:
        table.add_row(*("NULL" if v is None else str(v) for v in row))
    more = result.row_count - min(len(result.rows), MAX_ROWS_SHOWN)
    if more > 0 or result.truncated:
        table.caption = f"{more}{'+' if result.truncated else ''} more row(s)"
    return table


def show_result(console: Console, result: CorrectionResult) -> None:
    tree = plan_tree(result.tree)
    if tree is not None:
        console.print(Panel(tree, title="debugging tree", title_align="left"))
    if result.accepted:
        verdict = Text("accepted", style="bold green")
    else:
        verdict = Text(f"not accepted, best candidate shown ({result.reason})", style="bold yellow")
    parts: list[Any] = [
        Text.assemble("verdict: ", verdict),
        Syntax(result.sql or "-- no SQL", "sql", word_wrap=True),
    ]
    if result.result is not None:
        parts.append(rows_table(result.result))
    usage = result.usage
    parts.append(
        Text(
            f"{usage.llm_calls} LLM call(s), "
            f"{usage.prompt_tokens}+{usage.completion_tokens} tokens, "
            f"{usage.statements} statement(s), {usage.seconds:.2f} s",
            style="dim",
        )
    )
    console.print(Panel(Group(*parts), title=f"final SQL ({result.method})", title_align="left"))


def progress_line(event: TraceEvent) -> str | None:
    """One line of live progress for the events a person wants to see."""
    where = f"{event.node} " if event.node else ""
    if event.kind == "node_started":
        return f"▸ {where}{event.tool}: {_first_line(event.summary, 90)}"
    if event.kind == "llm_call":
        return f"  · LLM {event.purpose}: {event.summary}"
    if event.kind in (
        "judgement",
        "backtrack",
        "expanded",
        "fix_inserted",
        "plan_failed",
        "choice",
    ):
        return f"  {event.kind} {where}{_first_line(event.summary, 100)}"
    return None


def progress_printer(console: Console) -> Callable[[TraceEvent], None]:
    """A trace listener that prints live progress lines."""

    def show(event: TraceEvent) -> None:
        line = progress_line(event)
        if line is not None:
            console.print(line, style="dim", highlight=False, markup=False)

    return show
