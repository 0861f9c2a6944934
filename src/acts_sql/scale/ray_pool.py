"""`--executor ray`: the workers are Ray actors, on one machine or a cluster.

Each actor builds its worker once (one LLM backend, so a local model is
loaded once per actor, and the worker's database connections) and runs the
tasks Ray schedules on it one after the other. The pool keeps at most
`per_actor` tasks queued on each actor (backpressure: ``workers x per_actor``
in flight) and reads the next item only when one finishes, so the input is
never read ahead; each result is handed to ``on_done`` as it arrives. A task
whose actor raised or was lost (the actor's process died, its node went
away) is run once more, on a fresh actor in place of a lost one, and then
recorded as an error.

``address`` empty: ``ray.init()`` starts a local cluster of ``workers x
cpus_per_actor`` CPUs for the run and stops it afterwards. Otherwise it names
a running cluster (``auto``, ``ray://head:10001``); every node must have the
same acts-sql installed, and the databases and the LLM endpoint must be
reachable from every node. The actors' own output goes to Ray's session logs
(``/tmp/ray/session_latest/logs``), not to this terminal.

Ray is an optional dependency: ``pip install 'acts-sql[ray]'``.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any

from acts_sql.scale.base import (
    ExecutorUnavailableError,
    OnDone,
    Retries,
    WorkerSpec,
    WorkerStartError,
    describe,
    first_of,
)

INSTALL_HINT = "pip install 'acts-sql[ray]'"
PER_ACTOR = 2
"""Tasks queued on one actor at most: one running, one waiting (no idle gap between tasks)."""
START_SECONDS = 300.0
"""How long the actors may take to be placed and built before the run gives up."""

Item = tuple[str, Any]


def import_ray() -> Any:
    """The ray module, or ExecutorUnavailableError saying how to install it."""
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise ExecutorUnavailableError(
            f"--executor ray needs Ray, which is not installed: {INSTALL_HINT}"
        ) from None


class TaskActor:
    """The body of one Ray actor: a worker built once, and its tasks."""

    def __init__(self, spec: WorkerSpec) -> None:
        self.worker = spec.build()

    def ready(self) -> int:
        return os.getpid()

    def run(self, key: str, payload: Any) -> tuple[str, Any, str | None]:
        try:
            return key, self.worker.run(payload), None
        except Exception as exc:
            return key, None, describe(exc)

    def close(self) -> None:
        self.worker.close()


class RayPool:
    """`workers` Ray actors, each with its own worker (see the module doc)."""

    name = "ray"

    def __init__(
        self,
        workers: int = 1,
        *,
        address: str | None = None,
        cpus_per_actor: float = 1.0,
        per_actor: int = PER_ACTOR,
    ) -> None:
        self.workers = max(1, workers)
        self.address = (address or "").strip() or None
        self.cpus_per_actor = cpus_per_actor
        self.per_actor = max(1, per_actor)

    @property
    def in_flight(self) -> int:
        return self.workers * self.per_actor

    def run(self, spec: WorkerSpec, items: Iterable[Item], on_done: OnDone) -> None:
        ray = import_ray()
        pending = first_of(items)
        if pending is None:
            return
        started_here = not ray.is_initialized()
        if started_here:
            self._init(ray)
        try:
            _RayDispatch(ray, self, spec, pending, on_done).loop()
        finally:
            if started_here:
                ray.shutdown()

    def _init(self, ray: Any) -> None:
        options: dict[str, Any] = {
            "include_dashboard": False,
            "log_to_driver": False,
            "logging_level": logging.ERROR,
        }
        if self.address is None:
            options["num_cpus"] = max(1, round(self.workers * self.cpus_per_actor))
        try:
            ray.init(address=self.address, **options)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            where = self.address or "a local cluster"
            raise ExecutorUnavailableError(f"cannot start Ray on {where}: {exc}") from None


class _RayDispatch:
    """One run of a RayPool: actors, tasks in flight, retries."""

    def __init__(
        self, ray: Any, pool: RayPool, spec: WorkerSpec, source: Iterator[Item], on_done: OnDone
    ) -> None:
        self.ray, self.pool, self.spec, self.source, self.on_done = ray, pool, spec, source, on_done
        self.remote = ray.remote(max_restarts=0)(TaskActor).options(num_cpus=pool.cpus_per_actor)
        self.actors: list[Any] = []
        self.load: list[int] = []
        self.flight: dict[Any, tuple[int, Any, Item]] = {}
        self.again: deque[Item] = deque()
        self.retries = Retries()
        self.exhausted = False

    def loop(self) -> None:
        try:
            self._start_actors()
            while True:
                self._hand_out()
                if not self.flight:
                    return
                ready, _ = self.ray.wait(list(self.flight), num_returns=1)
                for ref in ready:
                    self._receive(ref)
        finally:
            for actor in self.actors:
                try:
                    self.ray.kill(actor)
                except Exception:  # an actor already gone
                    continue

    def _start_actors(self) -> None:
        self.actors = [self.remote.remote(self.spec) for _ in range(self.pool.workers)]
        self.load = [0] * len(self.actors)
        try:
            self.ray.get([actor.ready.remote() for actor in self.actors], timeout=START_SECONDS)
        except self.ray.exceptions.GetTimeoutError:
            raise WorkerStartError(
                f"{len(self.actors)} Ray actor(s) of {self.pool.cpus_per_actor:g} CPU were not "
                f"all running after {START_SECONDS:g} s: does the cluster have the CPUs free?"
            ) from None
        except Exception as exc:
            raise WorkerStartError(f"a Ray actor could not start: {_cause(exc)}") from None

    def _next(self) -> Item | None:
        if self.again:
            return self.again.popleft()
        if self.exhausted:
            return None
        item = next(self.source, None)
        self.exhausted = item is None
        return item

    def _hand_out(self) -> None:
        """Queue items on the least loaded actors, up to `per_actor` each."""
        while True:
            index = min(range(len(self.actors)), key=self.load.__getitem__)
            if self.load[index] >= self.pool.per_actor:
                return
            item = self._next()
            if item is None:
                return
            actor = self.actors[index]
            self.retries.start(item[0])
            self.flight[actor.run.remote(*item)] = (index, actor, item)
            self.load[index] += 1

    def _receive(self, ref: Any) -> None:
        index, actor, item = self.flight.pop(ref)
        if self.actors[index] is actor:
            self.load[index] -= 1
        try:
            key, value, error = self.ray.get(ref)
        except self.ray.exceptions.RayActorError as exc:
            self._replace(index, actor)
            self._failed(item, f"the Ray actor was lost: {_cause(exc)}")
            return
        except Exception as exc:
            self._failed(item, describe(exc))
            return
        if error is None:
            self.on_done(self.retries.done(key, value))
        else:
            self._failed(item, error)

    def _replace(self, index: int, actor: Any) -> None:
        """A fresh actor in place of a lost one (once per lost actor)."""
        if self.actors[index] is not actor:
            return
        self.actors[index] = self.remote.remote(self.spec)
        self.load[index] = 0

    def _failed(self, item: Item, why: str) -> None:
        outcome = self.retries.failed(item[0], why)
        if outcome is None:
            self.again.append(item)
        else:
            self.on_done(outcome)


def _cause(exc: BaseException) -> str:
    """The first line of a Ray error, which names what went wrong."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


__all__ = ["INSTALL_HINT", "RayPool", "TaskActor", "import_ray"]
