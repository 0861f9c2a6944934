"""Running many tasks on a few long-lived workers: threads, processes of this machine, Ray.

See `acts_sql.scale.base` for the abstraction and its rules, `local` and
`ray_pool` for the pools, and docs/SCALE.md for how the batch job and the
benchmark use them.
"""

from __future__ import annotations

from enum import StrEnum

from acts_sql.scale.base import TaskPool
from acts_sql.scale.local import ProcessPool, ThreadPool
from acts_sql.scale.ray_pool import RayPool


class ExecutorKind(StrEnum):
    LOCAL = "local"
    """A pool of processes on this machine."""
    RAY = "ray"
    """Ray actors: a local Ray cluster, or the one at --ray-address."""


def make_pool(
    kind: ExecutorKind | str, workers: int, *, ray_address: str | None = None
) -> TaskPool:
    """The pool `--executor KIND` names, with `workers` workers."""
    if ExecutorKind(kind) == ExecutorKind.RAY:
        return RayPool(workers, address=ray_address)
    return ProcessPool(workers)


__all__ = ["ExecutorKind", "ProcessPool", "RayPool", "ThreadPool", "make_pool"]
