"""The executor abstraction: many independent tasks, a few long-lived workers.

A job (a batch, a benchmark) hands a `TaskPool` a `WorkerSpec` and an
iterable of ``(key, payload)`` items. The pool builds one `Worker` per slot
from the spec, once (in a thread, a process of this machine or a Ray actor:
wherever the slot lives), so what a worker holds (an LLM backend, a loaded
local model, database connections) is made once and serves many tasks. Each
item's outcome is handed to ``on_done`` in the calling thread as soon as it
arrives, in completion order, so the job can write it at once.

The rules every pool keeps:

- backpressure: items are taken from the iterable only as slots free up, so
  at most `TaskPool.in_flight` are in flight and a file of millions of lines
  is never read into memory;
- a task whose worker raised, or whose worker was lost (a process that died,
  an actor that crashed), is run once more on a fresh or another worker, and
  after a second failure its outcome is an error (`Done.error`); the run goes
  on;
- a worker that cannot be built at all (bad configuration) ends the run with
  `WorkerStartError`, since every other slot would fail the same way.

The spec must be picklable (a pydantic model or a plain class of a module),
since process and Ray pools send it to where the worker lives; so must
payloads and results.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from acts_sql.errors import ConfigError

P = TypeVar("P")
R = TypeVar("R")

MAX_ATTEMPTS = 2
"""A task is run at most this often: once, and once more after a failed or lost worker."""


class WorkerStartError(ConfigError):
    """A worker could not be built (its LLM backend, its connections): the run cannot go on."""


class ExecutorUnavailableError(ConfigError):
    """The executor asked for cannot be used here (Ray not installed, no cluster at the
    address)."""


class Worker(Protocol):
    """What runs tasks, one at a time; built once per slot."""

    def run(self, payload: Any) -> Any: ...

    def close(self) -> None: ...


class WorkerSpec(Protocol):
    """A picklable description of a worker; `build` makes it where the slot lives."""

    def build(self) -> Worker: ...


@dataclass(frozen=True)
class Done(Generic[R]):
    """One task's outcome: its result, or why it has none after `attempts` tries."""

    key: str
    value: R | None
    error: str | None = None
    attempts: int = 1


OnDone = Callable[[Done[Any]], None]


class TaskPool(Protocol):
    """Runs tasks on workers (see the module doc)."""

    name: str
    workers: int

    @property
    def in_flight(self) -> int:
        """The most tasks handed out and not yet done at any time."""
        ...

    def run(self, spec: WorkerSpec, items: Iterable[tuple[str, Any]], on_done: OnDone) -> None:
        """Run every item; returns when all are done. Raises WorkerStartError."""
        ...


def first_of(items: Iterable[tuple[str, Any]]) -> Iterator[tuple[str, Any]] | None:
    """`items` as an iterator, or None when there is none (a pool then starts no worker)."""
    source = iter(items)
    first = next(source, None)
    return None if first is None else itertools.chain([first], source)


def describe(exc: BaseException) -> str:
    """An exception as one line: its type and message."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


class Retries:
    """Attempts per key, and what a failed attempt leads to (a retry or an error)."""

    def __init__(self) -> None:
        self._attempts: dict[str, int] = {}

    def start(self, key: str) -> int:
        """Count one more attempt of `key`; returns the attempt's number (1, 2)."""
        self._attempts[key] = self._attempts.get(key, 0) + 1
        return self._attempts[key]

    def attempts(self, key: str) -> int:
        return self._attempts.get(key, 0)

    def failed(self, key: str, why: str) -> Done[Any] | None:
        """None when `key` may run again, else its error outcome."""
        tries = self.attempts(key)
        if tries < MAX_ATTEMPTS:
            return None
        return Done(key=key, value=None, error=f"failed {tries} times: {why}", attempts=tries)

    def done(self, key: str, value: Any) -> Done[Any]:
        return Done(key=key, value=value, attempts=self.attempts(key))


__all__ = [
    "MAX_ATTEMPTS",
    "Done",
    "ExecutorUnavailableError",
    "OnDone",
    "Retries",
    "TaskPool",
    "Worker",
    "WorkerSpec",
    "WorkerStartError",
    "describe",
    "first_of",
]
