"""`bench bird-critic --executor ray`: the same executor abstraction as `batch`.

One Ray actor holds the scripted backend (so its replies go to the tasks in the same order
as one local worker's) and its own evaluator; the records match a local run's.
"""

from __future__ import annotations

import json

from typer.testing import CliRunner

from acts_sql.bench.loader import load_solutions, load_tasks
from acts_sql.cli.app import app

IDS = ["SQLite_4", "SQLite_7", "SQLite_20"]
VOLATILE = {"seconds", "eval_seconds"}


def records(out):
    lines = (out / "records.jsonl").read_text().splitlines()
    return [{k: v for k, v in json.loads(line).items() if k not in VOLATILE} for line in lines]


def test_bench_on_one_ray_actor_scores_as_a_local_run(ray_cluster, bird_critic_dir, tmp_path):
    tasks = {t.instance_id: t for t in load_tasks(bird_critic_dir / "tasks" / "sqlite500.jsonl")}
    solutions = load_solutions(bird_critic_dir / "dev" / "sqlite500_solutions.jsonl")
    solution = next(s for key, s in solutions.items() if key[1] == IDS[0])
    blocks = [solution.sol_sql, tasks[IDS[1]].issue_sql, ["SELEC broken FROM nowhere"]]
    script = tmp_path / "script.json"
    replies = ["".join(f"```sql\n{s}\n```\n" for s in block) for block in blocks]
    script.write_text(json.dumps({"correct": replies}))
    args = [
        "bench",
        "bird-critic",
        "--tasks",
        str(bird_critic_dir / "tasks" / "sqlite500.jsonl"),
        "--gt",
        str(bird_critic_dir / "dev"),
        "--method",
        "raw",
        "--llm",
        f"scripted:{script}",
        "--ids",
        ",".join(IDS),
    ]
    runs = {}
    for executor in ("local", "ray"):
        out = tmp_path / executor
        result = CliRunner().invoke(app, [*args, "--out", str(out), "--executor", executor])
        assert result.exit_code == 0, result.output
        assert "accuracy 33.33 %: 1/3" in result.output
        runs[executor] = records(out)
        assert all((out / r["trace_file"]).is_file() for r in runs[executor])
    assert runs["ray"] == runs["local"]
    assert [r["status"] for r in runs["ray"]] == ["passed", "failed", "error"]
