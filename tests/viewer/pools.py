"""A run with a real candidate pool, for the viewer and CLI rendering tests.

Scripted LLM, the demo database, the Figure 3 task, `candidates=6`: the raw
single-turn rewrite is the user's SQL reformatted (the engine refuses it), and
the six generations of `generate_sql` give five distinct runnable candidates
in three result groups (one generation repeats another: a vote):

    c1 raw     the user's SQL            refused by the engine   g1
    c2 greedy  rooms 1, 2 (2 votes)      group A (3 votes)       g2
    c3 sample  the intended SQL          group B (2 votes)       g3
    c4 sample  rooms 1, 2 another way    group A                 g2
    c5 sample  the intended SQL + a no-op filter                 g3
    c6 sample  room 6                    group C (1 vote)        g4

The judge is shown A, B and C and accepts B. With `payload`, markup goes into
c5's SQL (a string literal) and into the judge's reason, so both reach the
page (or the terminal) as data.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from acts_sql import CorrectionOptions, correct
from acts_sql.demo import demo_db_path, get_task
from acts_sql.engine.events import TraceEvent
from acts_sql.engine.result import CorrectionResult
from support import scripted

JUDGE_REASON = "group B lists the rooms whose bookings intersect in time"


def room_query(ids: str) -> str:
    return f"SELECT room_id, name FROM rooms WHERE room_id IN ({ids}) ORDER BY room_id"


def pool_script(payload: str = "") -> dict[str, list[Any]]:
    task = get_task("figure3")
    reformatted = " ".join(task.sql.lower().split()) + " ;"
    wrong_a = room_query("1, 2")
    wrong_a2 = "SELECT room_id, name FROM rooms WHERE room_id < 3 ORDER BY room_id"
    marker = payload.replace("'", "") or "no-op"
    right_b2 = task.right_sql.replace("\nORDER BY", f"\n  AND '{marker}' <> ''\nORDER BY")
    assert right_b2 != task.right_sql
    reason = JUDGE_REASON + (" " + payload if payload else "")

    def gen(sql: str) -> dict[str, str]:
        return {"sql": sql, "rationale": "scripted"}

    return {
        "plan": [{"cursor": "n1", "nodes": [{"id": "n1", "tool": "generate_sql"}]}],
        "correct": [f"The query should be:\n```sql\n{reformatted}\n```"],
        "generate_sql": [
            gen(wrong_a),
            gen(task.right_sql),
            gen(wrong_a),
            gen(wrong_a2),
            gen(right_b2),
            gen(room_query("6")),
        ],
        "judge": [{"reason": reason, "verdict": "accept", "group": "B", "backtrack_to": None}],
    }


def pool_result(
    payload: str = "", on_event: Callable[[TraceEvent], None] | None = None
) -> CorrectionResult:
    task = get_task("figure3")
    llm = scripted(pool_script(payload))
    return correct(
        str(demo_db_path()),
        task.question,
        task.sql,
        llm=llm,
        # a story of the tree's pool and judge: the gate's raw samples would take its replies
        options=CorrectionOptions(candidates=6, evidence_gate=False),
        on_event=on_event,
    )
