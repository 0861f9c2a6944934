"""How many threads llama.cpp uses: decided at load, corrected by measured step times.

llama.cpp's threads wait for each other at every operation of every token
(an OpenMP barrier in the build llama-cpp-python makes here). A waiting
thread spins, and when another process holds one of the cores, the spinning
thread keeps the core from the thread it waits for: with another job busy on
the 2 cores, 2 threads wrote 1.1-1.6 tokens/s and 1 thread 8-13.

The policy, without polling the system on every call:

1. Spinning is cut at its source: unless the user set ``OMP_WAIT_POLICY``
   or ``GOMP_SPINCOUNT``, ``GOMP_SPINCOUNT`` is set to 1000 (libgomp's own
   value for an oversubscribed machine) before llama.cpp starts its threads,
   so a waiting thread sleeps after a few microseconds instead of about
   300,000 spins. With another job running, 2 threads then write 6-8
   tokens/s instead of 1.1-1.6 (:func:`quiet_openmp`).
2. At each model load, the threads are the cores no other process is busy
   on at that moment (:func:`free_cores`: the runnable count of
   ``/proc/loadavg`` less this process's own; all cores where that file does
   not exist), at least one.
3. While decoding, :class:`ThreadGovernor` compares each single-token step
   with the fastest seen at the same thread count: two steps in a row 3x slower
   mean a rival took a core, and the rest is decoded with 1 thread. After 60 s the
   next call tries all threads again (a slow probe falls back within a step).

``n_threads`` or ``ACTS_SQL_THREADS`` fixes the number instead (no governor).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, MutableMapping
from pathlib import Path

from acts_sql.errors import LLMSpecError

SPIN_COUNT = "1000"
SLOWER = 3.0
"""A single-token step this many times slower than the fastest at its thread count: a rival."""
STRIKES = 2
"""Consecutive slow steps that make the governor drop to 1 thread (one may be a hiccup)."""
PROBE_AFTER_S = 60.0
"""Seconds on fewer threads before all of them are tried again."""


def quiet_openmp(environ: MutableMapping[str, str] | None = None) -> bool:
    """Make OpenMP's waiting threads sleep soon instead of spinning (before llama.cpp loads).

    Leaves an environment that already says how OpenMP should wait as it is.
    True when it set ``GOMP_SPINCOUNT``. Only a process that has not started
    libgomp yet is affected: the first model load calls this before importing
    llama-cpp-python.
    """
    env = os.environ if environ is None else environ
    if "OMP_WAIT_POLICY" in env or "GOMP_SPINCOUNT" in env:
        return False
    env["GOMP_SPINCOUNT"] = SPIN_COUNT
    return True


def cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def free_cores(
    total: int,
    loadavg: Path = Path("/proc/loadavg"),
    samples: int = 3,
    own_tasks: Path = Path("/proc/self/task"),
) -> int:
    """Cores not taken by other processes' runnable threads now (at least 1; `total` if unknown).

    The 4th field of /proc/loadavg counts runnable threads system-wide; this
    process's own runnable threads (the reader, and llama.cpp's workers that
    may still spin after a call) are taken off. The busiest of a few samples
    10 ms apart counts. Called once per model load.
    """
    others = 0
    for index in range(samples):
        try:
            running = int(loadavg.read_text().split()[3].split("/")[0])
        except (OSError, ValueError, IndexError):
            return total
        others = max(others, running - max(1, _runnable_threads(own_tasks)))
        if index + 1 < samples:
            time.sleep(0.01)
    return max(1, total - others)


def _runnable_threads(tasks: Path) -> int:
    """How many threads under `tasks` (a /proc/<pid>/task directory) are runnable; 0 if unknown."""
    count = 0
    try:
        stats = list(tasks.glob("*/stat"))
    except OSError:
        return 0
    for stat in stats:
        try:
            text = stat.read_text()
        except OSError:
            continue  # the thread ended
        state = text[text.rfind(")") + 2 : text.rfind(")") + 3]
        count += state == "R"
    return count


def fixed_threads(n_threads: int | None) -> int | None:
    """`n_threads`, else ACTS_SQL_THREADS, else None (the policy decides)."""
    if n_threads is not None:
        return n_threads
    raw = os.environ.get("ACTS_SQL_THREADS", "").strip()
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise LLMSpecError(f"ACTS_SQL_THREADS must be a positive integer, got {raw!r}")
    return value


class ThreadGovernor:
    """The thread count of one loaded model: `start` at load, fewer when steps slow down.

    :meth:`for_call` gives the count for the next call; :meth:`step` records
    one evaluation (tokens in the batch, seconds) and gives the count for the
    next one. Only single-token steps are compared (a batch's cost depends on
    its size), each with the fastest single-token step seen at its count.
    """

    def __init__(
        self,
        most: int,
        start: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        slower: float = SLOWER,
        probe_after_s: float = PROBE_AFTER_S,
    ) -> None:
        self.most = max(1, most)
        self.current = max(1, min(start, self.most))
        self.clock = clock
        self.slower = slower
        self.probe_after_s = probe_after_s
        self.fastest: dict[int, float] = {}
        self._strikes = 0
        self._reduced_at: float | None = None if self.current == self.most else clock()

    def for_call(self) -> int:
        """Threads for the next call: all again once fewer have been used for a while."""
        if self._reduced_at is not None and self.clock() - self._reduced_at >= self.probe_after_s:
            self.current = self.most
            self._reduced_at = None
        return self.current

    def step(self, tokens: int, seconds: float) -> int:
        """Record one evaluation at the current count; the count for the next one."""
        if tokens != 1 or seconds <= 0:
            return self.current
        fastest = self.fastest.get(self.current)
        if fastest is None or seconds < fastest:
            self.fastest[self.current] = seconds
        slow = fastest is not None and seconds > self.slower * fastest
        self._strikes = self._strikes + 1 if slow else 0
        if self.current > 1 and self._strikes >= STRIKES:
            self.current = 1
            self._strikes = 0
            self._reduced_at = self.clock()
        return self.current
