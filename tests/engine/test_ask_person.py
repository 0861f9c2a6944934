"""Asking the person (issue 39 item 4): readings of an ambiguous phrase that lead to different
results, nothing accepted: the asker sees each reading's SQL and first rows and chooses; no
answer keeps the engine's own choice; without an asker nothing changes. Scripted LLM, the
demo database's Figure 3 task."""

from __future__ import annotations

from typing import Any

from acts_sql import Budget, correct
from acts_sql.engine.choice import ChoiceQuestion
from acts_sql.engine.options import CorrectionOptions
from support import scripted

PLAN = {"cursor": "n1", "nodes": [{"id": "n1", "tool": "detect_ambiguities"}]}
TWO_READINGS = {
    "ambiguities": [
        {
            "phrase": "overlapping bookings",
            "interpretations": ["more than one booking", "time ranges intersect"],
        }
    ]
}
FIRST = "SELECT room_id, name FROM rooms WHERE room_id IN (1, 2) ORDER BY room_id"
SECOND = "SELECT room_id, name FROM rooms WHERE room_id IN (3, 4) ORDER BY room_id"


def reject(reason: str) -> dict[str, Any]:
    return {"reason": reason, "verdict": "reject", "group": None, "backtrack_to": None}


def script(user_sql: str) -> dict[str, list[Any]]:
    return {
        "plan": [PLAN],
        "detect_ambiguities": [TWO_READINGS],
        "choose": [{"reason": "the first reading", "cursor": "n1.1"}],
        "correct": [f"```sql\n{user_sql}\n```"],
        "generate_sql": [
            {"sql": FIRST, "rationale": "more than one booking"},
            {"sql": SECOND, "rationale": "time ranges intersect"},
        ],
        "judge": [reject("not sure which is meant"), reject("not sure which is meant")],
    }


def run(db: str, task: Any, asker: Any = None):
    options = CorrectionOptions(
        candidates=1, replan=False, scaled_budget=False, budget=Budget(max_llm_calls=12)
    )
    return correct(
        db, task.question, task.sql, llm=scripted(script(task.sql)), options=options, asker=asker
    )


class Person:
    def __init__(self, answer: str | None) -> None:
        self.answer = answer
        self.asked: list[tuple[ChoiceQuestion, float]] = []

    def __call__(self, question: ChoiceQuestion, timeout: float) -> str | None:
        self.asked.append((question, timeout))
        return self.answer


def of_kind(result: Any, kind: str) -> list[Any]:
    return [e for e in result.trace if e.kind == kind]


def test_the_person_sees_both_readings_and_their_choice_is_returned(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    person = Person("n1.2")
    result = run(demo_db, task, person)

    [(question, timeout)] = person.asked
    assert [r.id for r in question.readings] == ["n1.1", "n1.2"]
    assert "time ranges intersect" in question.readings[1].reading
    assert [r.sql for r in question.readings] == [FIRST, SECOND]
    assert question.readings[1].rows == [[3, "Cedar"], [4, "Delta"]]
    assert 0 < timeout <= 600
    assert result.sql == SECOND and result.accepted is False
    assert "the person chose reading n1.2" in result.reason
    [made] = of_kind(result, "choice_made")
    assert made.data["by"] == "person" and made.data["reading"] == "n1.2"
    assert len(of_kind(result, "choice_needed")[0].data["readings"]) == 2


def test_no_answer_keeps_the_engines_choice(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    unasked = run(demo_db, task)
    silent = run(demo_db, task, Person(None))
    wrong_id = run(demo_db, task, Person("n9"))

    assert silent.sql == unasked.sql == wrong_id.sql
    [made] = of_kind(silent, "choice_made")
    assert made.data["by"] == "timeout"
    assert made.data["reading"] in ("n1.1", "n1.2")


def test_without_an_asker_nothing_is_asked(demo_db, demo_tasks):
    result = run(demo_db, demo_tasks["figure3"])
    assert not of_kind(result, "choice_needed") and not of_kind(result, "choice_made")


def test_readings_with_the_same_result_are_not_asked_about(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    same = script(task.sql)
    same["generate_sql"] = [
        {"sql": FIRST, "rationale": "a"},
        {"sql": FIRST + " ", "rationale": "b"},
    ]
    person = Person("n1.2")
    options = CorrectionOptions(
        candidates=1, replan=False, scaled_budget=False, budget=Budget(max_llm_calls=12)
    )
    result = correct(
        demo_db, task.question, task.sql, llm=scripted(same), options=options, asker=person
    )

    assert person.asked == [] and not of_kind(result, "choice_needed")
