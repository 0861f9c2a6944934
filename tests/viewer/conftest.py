"""Fixtures for the viewer tests: the Figure 3 run, runs with candidate pools, hostile text."""

from __future__ import annotations

import pytest

from acts_sql import CorrectionOptions, correct
from acts_sql.demo import demo_db_path, get_task
from acts_sql.engine.result import CorrectionResult
from support import demo_script, judge_story, scripted
from viewer.pools import pool_result

PAYLOAD = '</script><img src=x onerror="window.__pwned=1"><!--<script>window.__pwned=2</script>'


@pytest.fixture(scope="session")
def figure3_result() -> CorrectionResult:
    task = get_task("figure3")
    return correct(
        str(demo_db_path()), task.question, task.sql, llm=scripted(demo_script("figure3"))
    )


@pytest.fixture(scope="session")
def hostile_result() -> CorrectionResult:
    """The Figure 3 run with markup in the question, the SQL and an LLM reply."""
    task = get_task("figure3")
    script = demo_script("figure3")
    script["judge"][0] = script["judge"][0].replace(
        "hours apart", "hours apart " + PAYLOAD.replace('"', "'")
    )
    sql = task.sql + f"\n-- {PAYLOAD}"
    return correct(str(demo_db_path()), task.question + " " + PAYLOAD, sql, llm=scripted(script))


@pytest.fixture(scope="session")
def judged_wrong_result() -> CorrectionResult:
    """Figure 3 where the judge (not the engine) rejects the first branch's only group."""
    task = get_task("figure3")
    return correct(str(demo_db_path()), task.question, task.sql, llm=scripted(judge_story()))


@pytest.fixture(scope="session")
def pooled_result() -> CorrectionResult:
    """Six candidates: one refused, five in three result groups; the judge picks B."""
    return pool_result()


@pytest.fixture(scope="session")
def hostile_pool_result() -> CorrectionResult:
    """The pooled run with markup in a candidate's SQL and in the judge's reason."""
    return pool_result(PAYLOAD)


@pytest.fixture(scope="session")
def replanned_result() -> CorrectionResult:
    """Figure 3 where both readings are rejected and the second plan reuses the id `n1`
    and adds `n9`: the engine runs them as `r.n1` and `r.n9` under the root."""
    task = get_task("figure3")

    def gen(sql: str) -> dict[str, str]:
        return {"sql": sql, "rationale": "scripted"}

    def reject(reason: str) -> dict:
        return {"reason": reason, "verdict": "reject", "group": None, "backtrack_to": None}

    rooms = "SELECT room_id, name FROM rooms WHERE room_id IN ({}) ORDER BY room_id"
    second_plan = {
        "cursor": "n1",
        "nodes": [
            {"id": "n1", "tool": "run_sql", "input": {"sql": "SELECT count(*) FROM bookings"}},
            {"id": "n9", "tool": "generate_sql", "description": "write it again"},
        ],
    }
    script = {
        "plan": [
            {"cursor": "n1", "nodes": [{"id": "n1", "tool": "detect_ambiguities"}]},
            second_plan,
        ],
        "detect_ambiguities": [
            {
                "ambiguities": [
                    {
                        "phrase": "overlapping bookings",
                        "interpretations": ["more than one booking", "time ranges intersect"],
                    }
                ]
            }
        ],
        "choose": [{"reason": "first", "cursor": "n1.1"}],
        "correct": [f"```sql\n{rooms.format('1')}\n```"],
        "generate_sql": [*(gen(rooms.format(k)) for k in "2345"), gen(task.right_sql)],
        "judge": [
            *(reject(f"room {k} alone is not it") for k in "2345"),
            {"reason": "intersecting ranges", "verdict": "accept", "group": None},
        ],
    }
    # the re-plan is what is drawn: the whole budget (the scaled one ends before it)
    options = CorrectionOptions(scaled_budget=False)
    return correct(
        str(demo_db_path()), task.question, task.sql, llm=scripted(script), options=options
    )
