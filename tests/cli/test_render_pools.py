"""The terminal output of a run with candidate pools: progress lines and the candidates table.

A real run (scripted LLM, the demo database; see tests/viewer/pools.py): six
distinct candidates, the raw rewrite refused by the engine, five in three
result groups A, B, C, the judge picking B. Rendered by the CLI's own
functions to a recording rich Console, read back as plain text.
"""

from __future__ import annotations

import re

from rich.console import Console

from acts_sql import correct
from acts_sql.cli.render import progress_printer, show_result
from acts_sql.demo import demo_db_path, get_task
from acts_sql.engine.options import CorrectionOptions
from acts_sql.engine.result import CorrectionResult
from support import scripted
from viewer.pools import JUDGE_REASON, pool_result, room_query

WIDTH = 150


def console() -> Console:
    return Console(record=True, width=WIDTH, color_system=None, force_terminal=False)


def table_rows(text: str) -> dict[str, list[str]]:
    """Candidate id -> the cells of its row in the candidates table (first line of each)."""
    rows = {}
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("│ │"):
            continue
        inner = line[1:-1].strip()[1:-1]  # inside the panel's and then the table's border
        cells = [c.strip() for c in inner.split("│")]
        if len(cells) == 8 and re.fullmatch(r"c\d+", cells[0]):
            rows[cells[0]] = cells
    return rows


def test_live_progress_shows_the_refusal_the_pool_and_the_judges_choice():
    out = console()
    result = pool_result(on_event=progress_printer(out))
    text = out.export_text()
    lines = text.splitlines()

    refusal = (
        "  refused c1 at n1: the same SQL as the user's (formatting aside): it changes nothing"
    )
    pool = (
        "  pool n1: 6 distinct candidate(s): 6 run, 0 fail, 1 refused or already rejected; "
        "4 result group(s)"
    )
    judged = f"  judgement n1 accepted group B (g3) of 3: {JUDGE_REASON}"
    assert refusal in lines and pool in lines and judged in lines
    # in the order they happened: refused while pooling, then the pool, then the judge
    assert lines.index(refusal) < lines.index(pool) < lines.index(judged)
    assert all(len(line) <= WIDTH for line in lines)
    assert result.accepted


def test_the_candidates_table_shows_every_candidate_its_group_and_verdict():
    result = pool_result()
    out = console()
    show_result(out, result)
    text = out.export_text()

    assert "candidates (6 distinct, 4 result groups)" in text
    rows = table_rows(text)
    #            id, node, origin, votes, group, status, verdict
    assert {cid: cells[:7] for cid, cells in rows.items()} == {
        "c1": ["c1", "n1", "raw", "1", "g1", "ok, 4 row(s)", "refused"],
        "c2": ["c2", "n1", "greedy", "2", "A·g2", "ok, 2 row(s)", "unjudged"],
        "c3": ["c3", "n1", "sample", "1", "B·g3", "ok, 2 row(s)", "accepted"],
        "c4": ["c4", "n1", "sample", "1", "A·g2", "ok, 2 row(s)", "unjudged"],
        "c5": ["c5", "n1", "sample", "1", "B·g3", "ok, 2 row(s)", "unjudged"],
        "c6": ["c6", "n1", "sample", "1", "C·g4", "ok, 1 row(s)", "unjudged"],
    }
    assert rows["c1"][7].startswith("the same SQL as the user's")
    assert rows["c3"][7].startswith("group B lists the rooms")
    # what the judge compared and chose, and what "refused" means
    assert (
        "n1: judge shown A=g2 (3 votes), B=g3 (2 votes), C=g4 (1 vote); chose B (g3): "
        + JUDGE_REASON
    ) in text
    assert "refused: set aside by the engine before any judge saw it" in text
    # the tree's node label carries the pool size; the table comes after the tree
    assert "n1 generate_sql  [accepted]  (6 cand · 4 groups · 1 refused)" in text
    # and shows the SQL of the group the judge picked (B), not the greedy candidate (A)
    tree = text.split("candidates (")[0]
    assert "sql: SELECT DISTINCT r.room_id" in tree and "IN (1, 2)" not in tree
    assert text.index("debugging tree") < text.index("candidates (") < text.index("final SQL")


def test_markup_in_a_reason_is_printed_as_it_is():
    markup = "[/] [b]x[/b]"  # rich would reject "[/]" and eat "[b]" if it read this as markup
    result = pool_result(payload=markup)
    out = console()
    show_result(out, result)
    text = out.export_text()
    assert table_rows(text)["c3"][7] == f"{JUDGE_REASON} {markup}"
    assert f"chose B (g3): {JUDGE_REASON} {markup}" in text


def test_long_reasons_are_clipped_to_one_short_cell():
    result = pool_result(payload="and then some more words " * 10)
    out = console()
    show_result(out, result)
    winner = table_rows(out.export_text())["c3"]
    assert winner[6] == "accepted"
    assert winner[7].startswith(JUDGE_REASON) and winner[7].endswith("…")
    assert len(winner[7]) <= 72


def test_a_single_candidate_run_shows_no_candidates_table():
    task = get_task("figure3")
    llm = scripted(
        {
            "plan": [{"cursor": "n1", "nodes": [{"id": "n1", "tool": "generate_sql"}]}],
            "correct": [f"```sql\n{task.right_sql}\n```"],
            "generate_sql": [{"sql": task.right_sql, "rationale": "scripted"}],
            "judge": [{"reason": "intersecting bookings", "verdict": "accept", "group": "A"}],
        }
    )
    result = correct(str(demo_db_path()), task.question, task.sql, llm=llm)
    assert len(result.candidates) == 1 and result.candidates[0]["votes"] == 2
    out = console()
    show_result(out, result)
    text = out.export_text()
    assert "candidates (" not in text
    assert "(1 cand · 1 group)" in text


def replanned_run(out: Console) -> CorrectionResult:
    """Every branch rejected early with budget left: the engine plans once more."""
    task = get_task("figure3")
    readings = ["more than one booking", "time ranges intersect"]

    def reject(reason: str, to: str | None = None) -> dict:
        return {"reason": reason, "verdict": "reject", "group": None, "backtrack_to": to}

    def gen(sql: str) -> dict:
        return {"sql": sql, "rationale": "scripted"}

    llm = scripted(
        {
            "plan": [
                {"cursor": "n1", "nodes": [{"id": "n1", "tool": "detect_ambiguities"}]},
                {"cursor": "m1", "nodes": [{"id": "m1", "tool": "generate_sql"}]},
            ],
            "detect_ambiguities": [
                {"ambiguities": [{"phrase": "overlapping", "interpretations": readings}]}
            ],
            "choose": [{"reason": "first", "cursor": "n1.1"}],
            "correct": [f"```sql\n{room_query('1')}\n```"],
            "generate_sql": [gen(room_query(str(i))) for i in (2, 3, 4, 5)] + [gen(task.right_sql)],
            "judge": [
                reject("rooms 1 and 2 only: too few", to="n1"),
                reject("room 3 alone is not it", to="n1"),
                reject("room 4 has no bookings"),
                reject("room 5 alone is not it"),
                {"reason": "intersecting bookings", "verdict": "accept", "group": "A"},
            ],
        }
    )
    return correct(
        str(demo_db_path()),
        task.question,
        task.sql,
        llm=llm,
        on_event=progress_printer(out),
        # the replan is what is rendered: the whole budget (the scaled one ends before it)
        options=CorrectionOptions(scaled_budget=False),
    )


def test_a_replan_and_a_judge_that_rejects_every_group_get_a_line_each():
    out = console()
    result = replanned_run(out)
    assert any(e.kind == "replan" for e in result.trace)
    lines = out.export_text().splitlines()
    replans = [line for line in lines if line.startswith("  replan:")]
    assert len(replans) == 1
    assert re.fullmatch(
        r"  replan: every branch is exhausted; planning again \(told \d+ lessons?\)", replans[0]
    )
    # the raw rewrite (room 1) and the greedy candidate (rooms 1, 2): two groups, both rejected
    assert "  judgement n1.1 rejected all 2 groups: rooms 1 and 2 only: too few" in lines
