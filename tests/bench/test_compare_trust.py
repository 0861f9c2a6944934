"""`acts-sql bench compare`: run names, runs of the same method, the trust columns."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from acts_sql.bench.candidates import CANDIDATES, CandidateLine
from acts_sql.bench.compare import compare, load_run, render_comparison, run_names
from acts_sql.bench.errors import BenchDataError
from acts_sql.bench.runner import BenchRecord
from acts_sql.cli.app import app


def write_run(directory, method, statuses, accepted=None, llm="scripted"):
    directory.mkdir(parents=True)
    accepted = accepted or [False] * len(statuses)
    lines = [
        BenchRecord(
            instance_id=f"T_{i}",
            set="s",
            dialect="SQLite",
            category="Query",
            method=method,
            llm=llm,
            ran=True,
            accepted=ok,
            status=status,
            llm_calls=2,
            prompt_tokens=10,
            completion_tokens=5,
            seconds=1.0,
        ).model_dump_json()
        for i, (status, ok) in enumerate(zip(statuses, accepted, strict=True))
    ]
    (directory / "records.jsonl").write_text("\n".join(lines) + "\n")
    return directory


def write_candidates(directory, rows):
    """rows: (candidates, duplicates, executing, any_pass, final_passed, accepted) per task."""
    lines = []
    for i, (n, dup, ok, any_pass, final, accepted) in enumerate(rows):
        line = CandidateLine(
            instance_id=f"T_{i}",
            set="s",
            dialect="SQLite",
            candidates=n,
            events=n + dup,
            duplicates=dup,
            executing=ok,
            passing=int(any_pass),
            any_pass=any_pass,
            final_passed=final,
            final_status="passed" if final else "failed",
            accepted=accepted,
            wrong_acceptance=accepted and not final,
        )
        lines.append(line.model_dump_json())
    (directory / CANDIDATES).write_text("\n".join(lines) + "\n")


@pytest.fixture
def three_runs(tmp_path):
    raw = write_run(tmp_path / "raw", "raw", ["passed", "failed", "failed"], [True, True, False])
    small = write_run(
        tmp_path / "acts-0.5b",
        "acts",
        ["failed", "failed", "passed"],
        [True, False, True],
        llm="local:0.5b",
    )
    large = write_run(
        tmp_path / "acts-1.5b",
        "acts",
        ["passed", "passed", "failed"],
        [True, True, True],
        llm="local:1.5b",
    )
    write_candidates(
        large,
        [
            (4, 2, 3, True, True, True),
            (2, 0, 1, True, True, True),
            (3, 1, 0, True, False, True),
        ],
    )
    return raw, small, large


def test_two_runs_of_one_method_stay_apart_with_their_directory_names(three_runs, tmp_path):
    raw, small, large = three_runs
    out = tmp_path / "cmp"
    args = ["bench", "compare", str(raw), str(small), str(large), "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    data = json.loads((out / "comparison.json").read_text())
    assert data["baseline"] == "raw"
    rows = {r["name"]: r for r in data["rows"]}
    assert list(rows) == ["raw", "acts-0.5b", "acts-1.5b"]
    assert rows["acts-0.5b"]["method"] == rows["acts-1.5b"]["method"] == "acts"
    assert rows["acts-0.5b"]["overall"]["passed"] == 1
    assert rows["acts-1.5b"]["overall"]["passed"] == 2
    assert (rows["acts-0.5b"]["correct_to_broken"], rows["acts-0.5b"]["broken_to_correct"]) == (
        1,
        1,
    )
    assert (rows["acts-1.5b"]["correct_to_broken"], rows["acts-1.5b"]["broken_to_correct"]) == (
        0,
        1,
    )
    # wrong acceptances come from the records, for every run
    assert [rows[n]["trust"]["wrong_acceptances"] for n in rows] == [1, 1, 1]
    assert [rows[n]["trust"]["accepted"] for n in rows] == [2, 2, 3]
    # the candidate columns only where candidates.jsonl exists
    assert rows["acts-0.5b"]["trust"]["any_pass"] is None
    trust = rows["acts-1.5b"]["trust"]
    assert (trust["covered"], trust["any_pass"], trust["final_passed"]) == (3, 3, 2)
    assert trust["not_selected"] == 1 and trust["any_pass_share"] == 100.0
    assert trust["duplicates_per_task"] == 1.0 and trust["candidates_per_task"] == 3.0
    assert trust["execution_share"] == round(100 * 4 / 9, 2)
    markdown = (out / "comparison.md").read_text()
    assert "### Table 4: generation, selection and trust" in markdown
    assert "| acts-0.5b | local:0.5b | 33.3 | 33.3 | 1 | 1 |" in markdown
    assert "| acts-0.5b | - | - | - | 1/2 | - | - | - | -/3 |" in markdown
    assert "| acts-1.5b | 2/3 (66.7 %) | 3/3 (100.0 %) | 1 | 1/3 | 3 | 1 | 44.44 % | 3/3 |" in (
        markdown
    )
    assert "| acts-1.5b | 2 / 2 / 2 | 15 / 15 / 15 | 1 / 1 / 1 | 3/3 |" in markdown


def test_names_option_labels_the_runs_and_picks_the_baseline(three_runs, tmp_path):
    raw, small, large = three_runs
    out = tmp_path / "cmp"
    args = ["bench", "compare", str(raw), str(small), str(large), "--out", str(out)]
    result = CliRunner().invoke(app, [*args, "--names", "base,a,b", "--baseline", "b"])
    assert result.exit_code == 0, result.output
    data = json.loads((out / "comparison.json").read_text())
    assert data["baseline"] == "b"
    assert [r["name"] for r in data["rows"]] == ["base", "a", "b"]
    # against b (solves T_0, T_1): base solves T_0 only, a solves T_2 only
    assert (data["rows"][0]["correct_to_broken"], data["rows"][0]["broken_to_correct"]) == (1, 0)
    assert (data["rows"][1]["correct_to_broken"], data["rows"][1]["broken_to_correct"]) == (2, 1)
    assert data["rows"][2]["correct_to_broken"] is None
    bad = CliRunner().invoke(app, [*args, "--names", "a,b"])
    assert bad.exit_code == 2 and "3 runs" in bad.output


def test_run_names_fall_back_to_directories_then_numbers(tmp_path):
    first = write_run(tmp_path / "x" / "acts", "acts", ["passed"])
    second = write_run(tmp_path / "y" / "acts", "acts", ["failed"])
    third = write_run(tmp_path / "vote", "vote", ["failed"])
    runs = [load_run(first), load_run(second), load_run(third)]
    assert run_names(runs) == ["x/acts", "y/acts", "vote"]
    assert run_names([load_run(first), load_run(first)]) == ["x/acts#1", "x/acts#2"]
    with pytest.raises(BenchDataError):
        run_names(runs, ["a", "a", "b"])
    # a baseline that is no run's name: the only run of that method
    comparison = compare(runs, baseline="vote")
    assert comparison.baseline == "vote"
    assert comparison.rows[0].correct_to_broken == 0
    assert compare(runs, baseline="acts").baseline is None  # two runs of acts: ambiguous
    assert "| vote | - | - | - | 0/0 |" in render_comparison(comparison)


def test_a_stale_candidates_line_is_not_counted(tmp_path):
    run = write_run(tmp_path / "acts", "acts", ["passed", "failed"], [True, True])
    # written when T_1 had passed; the record now says failed
    write_candidates(run, [(1, 0, 1, True, True, True), (2, 0, 2, True, True, True)])
    trust = compare([load_run(run)]).rows[0].trust
    assert (trust.covered, trust.any_pass, trust.wrong_acceptances) == (1, 1, 1)
