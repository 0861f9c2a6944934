"""Human output: the debugging tree, the candidate pools, the final SQL and its rows, with rich.

Text from the run (SQL, cells, reasons, LLM replies) only ever reaches rich as
`Text` or through a markup-free console (see `acts_sql.cli.console`), with its
control characters written as escapes (`shown`: ``\\x1b``, ``\\u202e``; a cell's
newlines too), and long text is capped: the terminal shows the first part and
says how much was cut.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.measure import Measurement
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from acts_sql.cli.console import capped, shown
from acts_sql.db.result import ExecResult
from acts_sql.engine.events import (
    EventKind,
    JudgementData,
    LlmCallData,
    NodeStartedData,
    OverruledData,
    PoolData,
    RefusalData,
    ReplanData,
    TraceEvent,
)
from acts_sql.engine.result import CorrectionResult
from acts_sql.sql.languages import LanguageInfo, LoadFailure, plugin_for

STATUS_STYLE = {
    "accepted": "bold green",
    "rejected": "bold red",
    "pruned": "red",
    "failed": "yellow",
    "skipped": "dim",
    "pending": "dim",
    "done": "cyan",
}
VERDICT_STYLE = {
    "accepted": "bold green",
    "rejected": "red",
    "refused": "bold magenta",
    "failed": "yellow",
    "unjudged": "dim",
}
MAX_ROWS_SHOWN = 10
WHY_CHARS = 72
MIN_WHY_WIDTH = 24
"""Narrower than this, the candidates' reasons go under their table, one line each."""
MAX_SQL_CHARS = 4000
"""The final SQL shown on the terminal is cut after this many characters (--json has it all)."""
MAX_CELL_CHARS = 200
MAX_ERROR_CHARS = 600


def _first_line(text: str, limit: int = 100) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return _clip(line, limit)


def _one_line(text: str, limit: int = 100) -> str:
    return _clip(" ".join((text or "").split()), limit)


def _clip(text: str, limit: int) -> str:
    text = shown(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def node_label(node: dict[str, Any], pool: str | None = None) -> Text:
    """One node of the tree; `pool` is its pool size (see `pool_sizes`)."""
    status = node.get("status", "pending")
    label = Text()
    label.append(f"{shown(str(node['id']))} ", style="bold")
    label.append(shown(str(node["tool"])), style="magenta")
    if node.get("description"):
        label.append(f"  {_first_line(node['description'], 80)}")
    label.append(f"  [{status}]", style=STATUS_STYLE.get(status, ""))
    if pool:
        label.append(f"  ({pool})", style="cyan")
    if node.get("candidate_sql"):
        label.append(f"\n  sql: {_one_line(node['candidate_sql'], 110)}", style="dim")
    elif node.get("summary"):
        label.append(f"\n  {_first_line(node['summary'], 110)}", style="dim")
    if node.get("reason") and status in ("rejected", "pruned", "failed", "accepted", "skipped"):
        label.append(
            f"\n  why: {_first_line(node['reason'], 110)}", style=STATUS_STYLE.get(status, "")
        )
    return label


def plan_tree(nodes: list[dict[str, Any]], pools: dict[str, str] | None = None) -> Tree | None:
    if not nodes:
        return None
    pools = pools or {}
    by_id = {n["id"]: n for n in nodes}
    root = next((n for n in nodes if n.get("parent") is None), nodes[0])
    tree = Tree(node_label(root, pools.get(root["id"])))
    stack = [(tree, root)]
    while stack:
        branch, node = stack.pop()
        for child_id in node.get("children", []):
            child = by_id.get(child_id)
            if child is not None:
                stack.append((branch.add(node_label(child, pools.get(child_id))), child))
    return tree


# ---------------------------------------------------------------- candidate pools


def pool_members(result: CorrectionResult) -> dict[str, list[str]]:
    """Node id -> the candidate ids of its pool (its `pool` event, else those it produced)."""
    pools: dict[str, list[str]] = {}
    for event in result.trace:
        if isinstance(event.data, PoolData) and event.node:
            pools[event.node] = [str(c) for c in event.data.candidates]
    produced: dict[str, list[str]] = {}
    for candidate in result.candidates:
        node = candidate.get("node")
        if node and node not in pools:
            produced.setdefault(node, []).append(str(candidate["id"]))
    return {**produced, **pools}


def pool_sizes(result: CorrectionResult) -> dict[str, str]:
    """Node id -> "4 cand · 2 groups" (· "1 refused"), for nodes that made candidates."""
    by_id = {c["id"]: c for c in result.candidates}
    sizes = {}
    for node, ids in pool_members(result).items():
        members = [by_id[i] for i in ids if i in by_id]
        groups = {c["group"] for c in members if c.get("group")}
        refused = sum(1 for c in members if c.get("verdict") == "refused")
        parts = [f"{len(members)} cand", _plural(len(groups), "group")]
        if refused:
            parts.append(f"{refused} refused")
        sizes[node] = " · ".join(parts)
    return sizes


def judge_labels(result: CorrectionResult) -> dict[str, dict[str, str]]:
    """Node id -> {group id: label} of the groups its judge was shown (the latest judgement)."""
    labels: dict[str, dict[str, str]] = {}
    for event in result.trace:
        given = event.data.labels if isinstance(event.data, JudgementData) else None
        if event.node and given:
            labels[event.node] = {str(g): str(label) for label, g in given.items()}
    return labels


def _status_cell(candidate: dict[str, Any]) -> str:
    run = candidate.get("result") or {}
    status = str(run.get("status") or "?")
    if status != "ok":
        return status
    more = "+" if run.get("truncated") else ""
    return f"ok, {run.get('row_count', 0)}{more} row(s)"


def _group_cell(candidate: dict[str, Any], labels: dict[str, dict[str, str]]) -> str:
    group = candidate.get("group")
    if not group:
        return "-"
    label = labels.get(candidate.get("node") or "", {}).get(group)
    return f"{label}·{group}" if label else str(group)


def show_pools(result: CorrectionResult) -> bool:
    """The candidates table is worth showing: several candidates, or a refusal."""
    candidates = result.candidates
    return len(candidates) > 1 or any(c.get("verdict") == "refused" for c in candidates)


def _why(candidate: dict[str, Any]) -> str:
    return _one_line(str(candidate.get("reason") or ""), WHY_CHARS)


def candidates_table(result: CorrectionResult, why_width: int | None = WHY_CHARS) -> Table:
    """Every distinct candidate: where it came from, its votes, result group and verdict.

    With `why_width`, the reason is the last column, one line cut to that width
    with an ellipsis; None leaves it out (see `CandidatesView`).
    """
    labels = judge_labels(result)
    table = Table(show_header=True, header_style="bold", show_lines=False, expand=False)
    for column in ("id", "node", "origin", "votes", "group", "status", "verdict"):
        table.add_column(column, no_wrap=True, justify="right" if column == "votes" else "left")
    if why_width is not None:
        table.add_column("why", no_wrap=True, overflow="ellipsis", max_width=why_width)
    for candidate in result.candidates:
        verdict = str(candidate.get("verdict") or "?")
        cells = (
            str(candidate.get("id", "?")),
            str(candidate.get("node") or "-"),
            str(candidate.get("origin") or "?"),
            str(candidate.get("votes", 1)),
            _group_cell(candidate, labels),
            _status_cell(candidate),
        )
        row = [Text(shown(cell)) for cell in cells]  # text from the run is never markup
        row.append(Text(shown(verdict), style=VERDICT_STYLE.get(verdict, "")))
        if why_width is not None:
            row.append(Text(_why(candidate)))
        table.add_row(*row)
    return table


class CandidatesView:
    """The candidates table, laid out for the width it is given.

    Each candidate takes one line: its reason is the last column, cut with an
    ellipsis, when at least `MIN_WHY_WIDTH` characters are left for it; on a
    narrower terminal the reasons follow the table, one line each.
    """

    def __init__(self, result: CorrectionResult) -> None:
        self.result = result

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        bare = candidates_table(self.result, why_width=None)
        used = Measurement.get(console, options, bare).maximum
        room = options.max_width - used - 3  # the column's padding (2) and its border (1)
        if room >= MIN_WHY_WIDTH:
            yield candidates_table(self.result, why_width=min(room, WHY_CHARS))
            return
        yield bare
        for candidate in self.result.candidates:
            line = Text(f"{shown(str(candidate.get('id', '?')))} why: ", style="bold")
            line.append(_why(candidate))
            line.no_wrap, line.overflow = True, "ellipsis"
            yield line


def judgement_lines(result: CorrectionResult) -> list[Text]:
    """What each judge was shown (labels, groups, votes) and what it decided."""
    votes = {g["id"]: g.get("votes", 0) for g in result.groups}
    lines = []
    overruled: list[str] = []  # the `overruled` events come just before their judgement
    for event in result.trace:
        if isinstance(event.data, OverruledData):
            overruled.append(event.data.group)
        if not isinstance(event.data, JudgementData) or not event.data.labels:
            continue
        kept, overruled = [g for g in overruled if g in event.data.labels.values()], []
        given = event.data.labels
        groups = ", ".join(
            f"{label}={g} ({_plural(int(votes.get(g, 0)), 'vote')})" for label, g in given.items()
        )
        line = Text(shown(f"{event.node}: judge shown {groups}; "))
        chosen = event.data.group
        if event.data.verdict == "accept" and chosen:
            label = next((k for k, v in given.items() if v == chosen), "?")
            line.append(shown(f"chose {label} ({chosen})"), style="bold green")
        elif event.data.by == "agent":
            line.append("rejected all", style="bold red")
            if kept:
                note = f" (overruled for {', '.join(kept)}: no evidence in the rows)"
                line.append(shown(note), style="yellow")
        else:
            line.append("overruled by the engine", style="yellow")
        line.append(f": {_one_line(event.summary, 110)}")
        lines.append(line)
    if any(c.get("verdict") == "refused" for c in result.candidates):
        lines.append(
            Text(
                "refused: set aside by the engine before any judge saw it "
                "(the user's SQL again, or exactly the user's rows)",
                style="magenta",
            )
        )
    return lines


def pools_panel(result: CorrectionResult) -> Panel:
    groups = {c["group"] for c in result.candidates if c.get("group")}
    title = (
        f"candidates ({len(result.candidates)} distinct, {_plural(len(groups), 'result group')})"
    )
    return Panel(
        Group(CandidatesView(result), *judgement_lines(result)),
        title=Text(title),
        title_align="left",
    )


def _cell(value: Any) -> Text:
    return Text(capped(shown("NULL" if value is None else str(value)), MAX_CELL_CHARS))


def rows_table(result: ExecResult) -> Table | Text:
    if result.status != "ok":
        return Text(capped(shown(result.failure(), layout=True), MAX_ERROR_CHARS), style="red")
    table = Table(show_header=True, header_style="bold", show_lines=False)
    for column in result.columns:
        table.add_column(_cell(column))
    for row in result.rows[:MAX_ROWS_SHOWN]:
        table.add_row(*(_cell(v) for v in row))
    more = result.row_count - min(len(result.rows), MAX_ROWS_SHOWN)
    if more > 0 or result.truncated:
        table.caption = f"{more}{'+' if result.truncated else ''} more row(s)"
    return table


def tree_with_answers(result: CorrectionResult) -> list[dict[str, Any]]:
    """The tree's nodes, an accepted node showing the SQL the judge picked from its pool.

    (A node's own `candidate_sql` is its greedy candidate, which need not be the pick.)
    """
    picked = {
        e.node: e.data.sql
        for e in result.trace
        if isinstance(e.data, JudgementData) and e.data.verdict == "accept" and e.data.sql
    }
    return [
        {**n, "candidate_sql": picked[n["id"]]} if n.get("id") in picked else n for n in result.tree
    ]


def show_result(console: Console, result: CorrectionResult) -> None:
    tree = plan_tree(tree_with_answers(result), pool_sizes(result))
    if tree is not None:
        console.print(Panel(tree, title=Text("debugging tree"), title_align="left"))
    if show_pools(result):
        console.print(pools_panel(result))
    if result.accepted:
        verdict = Text("accepted", style="bold green")
    else:
        reason = shown(result.reason)
        verdict = Text(f"not accepted, best candidate shown ({reason})", style="bold yellow")
    parts: list[Any] = [Text.assemble("verdict: ", verdict), *sql_view(result.sql)]
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
    language = plugin_for(result.dialect) if result.dialect else None
    what = f"{language.display_name} query" if language is not None else "SQL"
    title = Text(f"final {what} ({result.method})")
    console.print(Panel(Group(*parts), title=title, title_align="left"))


def languages_table(infos: list[LanguageInfo], failures: list[LoadFailure]) -> Table:
    """`acts-sql languages`: one row per language, then the plugins that cannot load."""
    table = Table(title="query languages", title_justify="left")
    for column in ("name", "language", "kind", "runs on", "tools not available", "from"):
        table.add_column(column)
    for info in infos:
        cells = (
            info.name,
            info.display_name,
            info.kind,
            ", ".join(info.targets),
            ", ".join(info.unavailable_tools) or "-",
            info.source,
        )
        table.add_row(*(Text(shown(cell)) for cell in cells))
    for failure in failures:
        cells = (failure.name, "-", "not loadable", "-", "-", f"{failure.source}: {failure.reason}")
        table.add_row(*(Text(shown(cell)) for cell in cells))
    return table


def sql_view(sql: str, limit: int = MAX_SQL_CHARS) -> list[Any]:
    """SQL, highlighted; after `limit` characters, cut, with a line saying how much."""
    if len(sql) <= limit:
        return [Syntax(shown(sql, layout=True) or "-- no SQL", "sql", word_wrap=True)]
    note = f"… {len(sql) - limit:,} more characters of SQL not shown ({len(sql):,} in all)"
    return [
        Syntax(shown(sql[:limit], layout=True), "sql", word_wrap=True),
        Text(note, style="yellow"),
    ]


def progress_line(event: TraceEvent) -> str | None:
    """One line of live progress for the events a person wants to see."""
    where = f"{event.node} " if event.node else ""
    if isinstance(event.data, NodeStartedData):
        return f"▸ {where}{event.tool}: {_first_line(event.summary, 90)}"
    if isinstance(event.data, LlmCallData):
        if event.data.before_any_reply:
            return None  # the run stops: the command's error line says why
        return f"  · LLM {event.purpose}: {_one_line(event.summary, 200)}"
    if isinstance(event.data, PoolData):
        return f"  pool {event.node or ''}: {_one_line(event.summary, 100)}"
    if isinstance(event.data, RefusalData):
        verdict = "refused" if event.data.verdict == "refused" else "rejected"
        at = f" at {event.node}" if event.node else ""
        candidate = event.data.candidate
        return f"  {verdict} {candidate}{at}: {_one_line(event.summary, 90)}"
    if isinstance(event.data, ReplanData):
        lessons = [ln for ln in event.data.lessons.splitlines() if ln.strip()]
        told = f" (told {_plural(len(lessons), 'lesson')})" if lessons else ""
        return f"  replan: {_one_line(event.summary, 90)}{told}"
    if isinstance(event.data, JudgementData):
        return _judgement_line(event.data, event.summary, where)
    if event.kind in _ONE_LINERS:
        return f"  {event.kind} {where}{_first_line(event.summary, 100)}"
    return None


_ONE_LINERS = {
    EventKind.OVERRULED,
    EventKind.BACKTRACK,
    EventKind.EVIDENCE,
    EventKind.EXPANDED,
    EventKind.FIX_INSERTED,
    EventKind.PLAN_FAILED,
    EventKind.CHOICE,
    EventKind.RULE_FIRED,
    EventKind.LLM_REPAIR,
    EventKind.SQL_TRANSLATED,
    EventKind.DAC_FEEDBACK,
    EventKind.DAC_DROPPED,
}
"""The kinds a progress line shows as `kind node summary`."""


def fan_out(*listeners: Callable[[TraceEvent], None]) -> Callable[[TraceEvent], None]:
    """One trace listener that hands each event to every one of `listeners`, in order."""

    def each(event: TraceEvent) -> None:
        for listen in listeners:
            listen(event)

    return each


def progress_printer(console: Console) -> Callable[[TraceEvent], None]:
    """A trace listener that prints live progress lines."""

    def show(event: TraceEvent) -> None:
        line = progress_line(event)
        if line is not None:
            console.print(Text(shown(line), style="dim"))

    return show


def _judgement_line(data: JudgementData, summary: str, where: str) -> str:
    given = data.labels
    reason = _one_line(summary, 80)
    chosen = data.group
    if data.verdict == "accept" and chosen:
        label = next((k for k, v in given.items() if v == chosen), "?")
        return f"  judgement {where}accepted group {label} ({chosen}) of {len(given)}: {reason}"
    if data.verdict == "reject" and given and data.by == "agent":
        return f"  judgement {where}rejected all {_plural(len(given), 'group')}: {reason}"
    return f"  judgement {where}{_first_line(summary, 100)}"


class Activity:
    """A trace listener that keeps the step a correction is at, for the Ctrl-C line."""

    def __init__(self) -> None:
        self.step = ""

    def __call__(self, event: TraceEvent) -> None:
        if isinstance(event.data, NodeStartedData):
            self.step = f"{event.node} {event.tool}"

    def where(self) -> str:
        """ "at n1.2 generate_sql", or "before its first step"."""
        return f"at {self.step}" if self.step else "before its first step"
