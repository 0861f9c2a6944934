"""scripts/strong_answers.py: right answers and the user's own SQL put through `raw` and `vote`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from support import load_script

TASK = "sqlite500/SQLite_4"


@pytest.fixture(scope="module")
def strong():
    return load_script("strong_answers")


def _task(root: Path) -> dict:
    for line in (root / "tasks" / "sqlite500.jsonl").read_text().splitlines():
        task = json.loads(line)
        if f"sqlite500/{task['instance_id']}" == TASK:
            return task
    raise AssertionError(f"{TASK} not in sqlite500.jsonl")


def _data_with_models(root: Path, into: Path, predictions: dict[str, list[str]]) -> Path:
    """A data directory: the real tasks and dev split, and made-up `example_output` models."""
    into.mkdir()
    (into / "tasks").symlink_to(root / "tasks")
    (into / "dev").symlink_to(root / "dev")
    instance = TASK.split("/")[1]
    for model, statements in predictions.items():
        folder = into / "example_output" / model
        folder.mkdir(parents=True)
        row = {"instance_id": instance, "pred_sqls": repr(statements)}  # the published form
        (folder / "sqlite_500.jsonl").write_text(json.dumps(row) + "\n")
    return into


def test_replies_and_published_predictions_are_read_as_statements(strong, tmp_path) -> None:
    assert (
        strong.reply(["SELECT 1;", " SELECT 2 "]) == "```sql\nSELECT 1\n```\n```sql\nSELECT 2\n```"
    )
    assert strong.reply(None) == strong.reply([]) == ""
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "flash.jsonl").write_text(
        json.dumps({"instance_id": 7, "pred_sqls": "['SELECT 1', 'SELECT 2']"}) + "\n"
    )
    (folder / "pg530.jsonl").write_text(
        json.dumps({"instance_id": "PostgreSQL_3", "pred_sqls": ["SELECT 3"]}) + "\n"
    )
    assert strong.read_predictions(folder) == {
        "flash/7": ["SELECT 1", "SELECT 2"],
        "pg530/PostgreSQL_3": ["SELECT 3"],
    }


def test_summary_counts_right_answers_that_were_not_accepted(strong) -> None:
    rows = [
        {"set": "s", "instance_id": "a", "status": "passed", "accepted": True, "stop_reason": ""},
        {"set": "s", "instance_id": "b", "status": "passed", "accepted": False, "stop_reason": "r"},
        {"set": "s", "instance_id": "c", "status": "failed", "accepted": True, "stop_reason": ""},
        {
            "set": "s",
            "instance_id": "d",
            "status": "not_evaluable",
            "accepted": True,
            "stop_reason": "",
        },
    ]
    counted = strong.summary(rows)
    assert counted["evaluable"] == 3 and counted["passed"] == 2 and counted["accepted"] == 2
    assert counted["right acceptances"] == 1 and counted["wrong acceptances"] == 1
    assert counted["right but not accepted"] == {"s/b": "r"}
    runs = {"m1": {"s/a": rows[0], "s/c": rows[2]}, "m2": {"s/c": rows[2], "s/b": rows[1]}}
    assert strong.oracle(runs) == 2


def test_the_solution_is_accepted_and_the_users_sql_is_not(
    strong, bird_critic_dir, tmp_path, monkeypatch, capsys
) -> None:
    task = _task(bird_critic_dir)
    solutions = strong.read_solutions(bird_critic_dir)
    data = _data_with_models(
        bird_critic_dir,
        tmp_path / "data",
        {
            "right": solutions[TASK],
            "right-again": [s.lower() for s in solutions[TASK]],
            "echo": task["issue_sql"],
        },
    )
    out = tmp_path / "out"
    argv = ["strong_answers.py", "--out", str(out), "--data", str(data), "--sqlite", "1"]
    monkeypatch.setattr(sys, "argv", [*argv, "--postgresql", "0"])
    assert strong.main() == 0
    report = json.loads(capsys.readouterr().out)

    assert report["tasks"] == 1 and report["models"] == ["echo", "right", "right-again"]
    assert report["gold"]["right acceptances"] == 1 and report["gold"]["wrong acceptances"] == 0
    assert report["right"]["right acceptances"] == 1
    assert report["echo"]["passed"] == 0 and report["echo"]["accepted"] == 0  # refused
    # the two right answers agree and the user's SQL casts no vote: a majority, accepted
    assert report["vote"]["right acceptances"] == 1
    assert report["any model passes"] == 1 and report["best single model"][0] == 1
    assert report["vote ties"]["tasks"] == 0  # one group holds both votes
    # resumable: a second invocation runs nothing again and says the same
    assert strong.main() == 0
    assert json.loads(capsys.readouterr().out) == report
    # gold only
    monkeypatch.setattr(sys, "argv", [*argv, "--postgresql", "0", "--models", "none"])
    assert strong.main() == 0
    alone = json.loads(capsys.readouterr().out)
    assert alone["models"] == [] and alone["gold"] == report["gold"] and "vote" not in alone


def _vote_trace(draws: list[str | None], refused: set[str], returned: str) -> dict:
    """A vote trace: each draw names its candidate (None: no SQL in the reply); candidate
    `cN` returns the rows of group `gN`, and repeats of it are votes for it."""
    events, votes = [], {}
    for name in draws:
        if name is None:
            events.append({"kind": "candidate_missing", "data": {}})
            continue
        events.append({"kind": "candidate", "data": {"candidate": name}})
        votes[name] = votes.get(name, 0) + 1
    candidates = [
        {
            "id": name,
            "sql": f"SELECT  {name[1:]}",
            "group": f"g{name[1:]}",
            "votes": count,
            "verdict": "refused" if name in refused else "unjudged",
        }
        for name, count in votes.items()
    ]
    return {"trace": events, "candidates": candidates, "sql": f"SELECT {returned[1:]}"}


def test_tied_vote_groups_say_whether_a_passing_answer_was_among_them(strong) -> None:
    trace = _vote_trace(["c1", "c2", None, "c3"], refused={"c3"}, returned="c1")
    # c1 and c2 tie at one vote each (c3 is refused: no vote); c2 passes, c1 is returned
    assert strong.tied_groups(trace, [False, True, False, False]) == (True, False)
    assert strong.tied_groups(trace, [True, False, False, False]) == (True, True)
    # a refused sample that passes is not among the tied groups
    assert strong.tied_groups(trace, [False, False, False, True]) == (False, False)
    # one more vote for c2: no tie
    untied = _vote_trace(["c1", "c2", "c2", "c3"], refused=set(), returned="c2")
    assert strong.tied_groups(untied, [False, True, True, False]) is None
    # nothing that runs and is trusted: no tie either
    assert strong.tied_groups(_vote_trace(["c1"], {"c1"}, "c1"), [True]) is None
    with pytest.raises(ValueError):  # one pass flag per draw
        strong.tied_groups(trace, [True])
    assert strong.tie_summary([None, (True, False), (True, True), (False, False)]) == {
        "tasks": 3,
        "a passing answer among the tied groups": 2,
        "the answer returned passes": 1,
    }
