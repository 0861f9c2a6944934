"""`--executor ray` on a local Ray cluster (2 CPUs, started and stopped by the session).

Skipped, with the reason, where Ray is not installed (the dev extra installs it).
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from acts_sql.batch.runner import BatchRequest, run_batch
from acts_sql.batch.worker import BatchSettings
from acts_sql.cli.app import app
from acts_sql.scale import ProcessPool
from acts_sql.scale.base import WorkerStartError
from acts_sql.scale.ray_pool import RayPool
from batch_inputs import SCRIPT, decided, results, twelve_lines
from pool_workers import Doubling


def test_a_batch_on_ray_decides_as_the_local_executor(ray_cluster, tmp_path):
    tasks, databases = twelve_lines(tmp_path)
    local = run_batch(
        BatchRequest(
            input=tasks,
            out=tmp_path / "local",
            databases=databases,
            settings=BatchSettings(llm=f"scripted:{SCRIPT}"),
            workers=2,
        ),
        pool=ProcessPool(2),
    )
    args = ["batch", "--in", str(tasks), "--out", str(tmp_path / "ray"), "--databases"]
    extra = ["--llm", f"scripted:{SCRIPT}", "--executor", "ray", "--workers", "2"]
    on_ray = CliRunner().invoke(app, [*args, str(databases), *extra])
    assert on_ray.exit_code == 1, on_ray.output  # two bad lines
    assert "line 4: not JSON" in on_ray.stderr

    assert decided(tmp_path / "ray") == decided(tmp_path / "local")
    ray = json.loads((tmp_path / "ray" / "summary.json").read_text())
    assert ray["executor"] == "ray" and ray["bad_lines"] == 2
    # the three text-to-SQL tasks are not accepted: the script's judge is the only evidence
    # there, and acceptance needs a result check besides the judge (issue 38)
    assert (ray["finished"], ray["accepted"]) == (local.finished, local.accepted) == (10, 7)
    workers = {record["worker"] for record in results(tmp_path / "ray")}
    assert 1 <= len(workers) <= 2  # the actors' processes


def test_a_lost_actor_takes_its_tasks_which_run_again_on_a_fresh_actor(ray_cluster, tmp_path):
    marker = tmp_path / "died"
    done = []
    RayPool(2).run(Doubling(die_on=4, marker=marker), [(str(n), n) for n in range(8)], done.append)
    by_key = {d.key: d for d in done}
    assert marker.exists() and len(by_key) == 8
    assert by_key["4"].value[1] == 8 and by_key["4"].attempts == 2
    assert all(d.error is None for d in done)


def test_a_task_that_fails_twice_is_an_error_and_an_actor_that_cannot_start_ends_the_run(
    ray_cluster,
):
    done = []
    RayPool(1).run(Doubling(raise_on=2), [(str(n), n) for n in range(3)], done.append)
    failed = next(d for d in done if d.key == "2")
    assert failed.error == "failed 2 times: ValueError: cannot double 2"
    with pytest.raises(WorkerStartError, match="could not start"):
        RayPool(1).run(Doubling(broken=True), [("a", 1)], done.append)
