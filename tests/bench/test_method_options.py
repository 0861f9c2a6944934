"""Sampling options of a bench run (`--candidates`, `--temperature`) and the methods script.

`acts_sql.api.correct` is replaced by a test double here: the bench passes its
`CorrectionOptions`, and records the sampling options only when they are set.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import acts_sql.bench.runner as runner_module
from acts_sql.bench.errors import BenchDataError
from acts_sql.bench.loader import load_dev_ids
from acts_sql.bench.runner import BenchRequest, MethodSpec, run_bench
from acts_sql.bench.selection import TaskFilter
from acts_sql.cli.app import app
from acts_sql.engine.events import EVENT_TYPES, CandidateData
from acts_sql.engine.options import DEFAULT_TEMPERATURE, CorrectionOptions, Method
from acts_sql.engine.result import CorrectionResult
from support import load_script, scripted

TASK = "SQLite_4"


class FakeCorrect:
    """Stands in for `correct`: records its keyword arguments, returns the issue SQL."""

    def options(self) -> CorrectionOptions:
        """The options of the last call."""
        return self.calls[-1]["options"]

    def __init__(self) -> None:
        self.calls: list[dict] = []

    def __call__(self, executor, question, sql, **kwargs) -> CorrectionResult:
        self.calls.append(kwargs)
        event = EVENT_TYPES[CandidateData](seq=0, t=0.0, data=CandidateData(sql=sql, status="ok"))
        return CorrectionResult(
            sql=sql,
            accepted=True,
            original_sql=sql,
            method=kwargs["options"].method.value,
            dialect="sqlite",
            question=question,
            statements=[sql],
            trace=[event],
        )


@pytest.fixture
def fake(monkeypatch) -> FakeCorrect:
    double = FakeCorrect()
    monkeypatch.setattr(runner_module, "correct", double)
    return double


def request(root: Path, out: Path, spec: MethodSpec) -> BenchRequest:
    return BenchRequest(
        tasks=root / "tasks" / "sqlite500.jsonl",
        gt=root / "dev",
        out=out,
        method=spec,
        filter=TaskFilter(ids=[TASK]),
    )


def test_sampling_options_reach_correct_only_when_set(bird_critic_dir, fake, tmp_path):
    spec = MethodSpec(
        llm="scripted", options=CorrectionOptions(method=Method.ACTS, candidates=3, temperature=0.7)
    )
    report = run_bench(request(bird_critic_dir, tmp_path / "k3", spec), backend=scripted({}))
    assert report.overall.tasks == 1
    assert fake.options().candidates == 3 and fake.options().temperature == 0.7
    saved = json.loads((tmp_path / "k3" / "records.jsonl").read_text())
    assert (saved["candidates"], saved["temperature"]) == (3, 0.7)
    assert saved["accepted"] and saved["status"] == "failed"  # the issue SQL: wrongly accepted

    run_bench(
        request(bird_critic_dir, tmp_path / "default", MethodSpec(llm="scripted")),
        backend=scripted({}),
    )
    assert not {"candidates", "temperature"} & fake.options().model_fields_set
    assert fake.options().candidates is None and fake.options().temperature == DEFAULT_TEMPERATURE
    saved = json.loads((tmp_path / "default" / "records.jsonl").read_text())
    assert (saved["candidates"], saved["temperature"]) == (None, None)

    # resuming a directory with other sampling options is refused
    other = MethodSpec(llm="scripted", options=CorrectionOptions(candidates=5, temperature=0.7))
    with pytest.raises(BenchDataError, match="candidates=3"):
        run_bench(request(bird_critic_dir, tmp_path / "k3", other), backend=scripted({}))


def test_cli_passes_candidates_and_temperature(bird_critic_dir, fake, tmp_path):
    script = tmp_path / "script.json"
    script.write_text("{}")
    out = tmp_path / "run"
    args = [
        "bench",
        "bird-critic",
        "--tasks",
        str(bird_critic_dir / "tasks" / "sqlite500.jsonl"),
        "--gt",
        str(bird_critic_dir / "dev"),
        "--llm",
        f"scripted:{script}",
        "--ids",
        TASK,
        "--out",
        str(out),
        "--candidates",
        "4",
        "--temperature",
        "0.9",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert (fake.options().candidates, fake.options().temperature) == (4, 0.9)
    bad = CliRunner().invoke(app, [*args[:-4], "--candidates", "0"])
    assert bad.exit_code == 2


def test_method_help_lists_every_method():
    result = CliRunner().invoke(app, ["bench", "bird-critic", "--help"])
    assert all(m.value in result.output for m in Method)


@pytest.fixture(scope="module")
def methods_script():
    return load_script("bird_critic_methods")


def test_script_picks_a_slice_of_the_dev_tasks(bird_critic_dir, methods_script):
    entries = [
        f"{e.set}/{e.instance_id}"
        for e in load_dev_ids(bird_critic_dir / "dev")
        if e.dialect == "SQLite" and e.set == "sqlite500"
    ]
    first = methods_script.chosen_ids(bird_critic_dir, {"SQLite": 3})
    later = methods_script.chosen_ids(bird_critic_dir, {"SQLite": 3}, {"SQLite": 3})
    assert first == entries[:3] and later == entries[3:6]


def test_script_reads_any_method_name_with_ablation_suffixes(methods_script):
    for method in Method:
        spec = methods_script.method_spec(f"{method.value}-no-exec", candidates=2)
        options = spec.options
        assert spec.method == method and not options.execution_tools and options.ambiguity_detection
        assert options.candidates == 2 and spec.label == f"{method.value}-no-exec"
    both = methods_script.method_spec("acts-no-exec-no-ambiguity", temperature=0.5)
    assert both.label == "acts-no-exec-no-ambiguity" and both.options.temperature == 0.5
    with pytest.raises(SystemExit):
        methods_script.method_spec("nonsense")
