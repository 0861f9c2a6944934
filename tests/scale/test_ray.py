"""`--executor ray` on a local Ray cluster (2 CPUs, started and stopped by the session).

Skipped, with the reason, where Ray is not installed (the dev extra installs it).
"""

from __future__ import annotations

import pytest

from acts_sql.batch.runner import BatchRequest, run_batch
from acts_sql.batch.worker import BatchSettings
from acts_sql.scale import ExecutorKind, ProcessPool
from acts_sql.scale.base import WorkerStartError
from acts_sql.scale.ray_pool import RayPool
from batch_inputs import SCRIPT, decided, results, twelve_lines
from pool_workers import Doubling


def test_a_batch_on_ray_decides_as_the_local_executor(ray_cluster, tmp_path):
    tasks, databases = twelve_lines(tmp_path)
    settings = BatchSettings(llm=f"scripted:{SCRIPT}")
    summaries = {}
    for kind, pool in ((ExecutorKind.LOCAL, ProcessPool(2)), (ExecutorKind.RAY, RayPool(2))):
        request = BatchRequest(
            input=tasks,
            out=tmp_path / kind.value,
            databases=databases,
            settings=settings,
            executor=kind,
            workers=2,
        )
        summaries[kind] = run_batch(request, pool=pool)
    assert decided(tmp_path / "ray") == decided(tmp_path / "local")
    assert len(results(tmp_path / "ray")) == 10
    local, ray = summaries[ExecutorKind.LOCAL], summaries[ExecutorKind.RAY]
    assert (ray.finished, ray.accepted, ray.bad_lines) == (local.finished, local.accepted, 2)
    assert ray.executor == "ray"
    # the tasks ran on both actors' processes, none in this one
    workers = {record["worker"] for record in results(tmp_path / "ray")}
    assert 1 <= len(workers) <= 2


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
