"""Running a job in a separate process, with a time limit.

Test cases are untrusted Python from the benchmark: they may hang, crash the
interpreter or leave state behind. Each job therefore runs in a child forked
by a worker process (`acts_sql.bench.worker`), which starts once per parallel
slot with the evaluator's modules imported; a job costs a fork, not a Python
start. The worker kills a child past the job's time limit; the parent, in
turn, replaces a worker that stops answering.
"""

from __future__ import annotations

import json
import os
import queue
import selectors
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from types import TracebackType

from acts_sql.bench.jobs import JobOutcome, TaskJob

_GRACE_S = 30.0
"""How much longer than a job's limit the parent waits for its worker's reply."""


@dataclass
class IsolatedRun:
    """What came back: the outcome, or that the job timed out or its process died."""

    outcome: JobOutcome | None
    timed_out: bool = False
    died: str | None = None


class WorkerProcess:
    """One ``python -m acts_sql.bench.worker`` and its line protocol."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "acts_sql.bench.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self._buffer = b""

    def alive(self) -> bool:
        return self.process.poll() is None

    def run(self, job: TaskJob, limit_s: float) -> IsolatedRun:
        """Send ``job``; wait for the reply (limit plus a grace period)."""
        assert self.process.stdin is not None
        request = {"job": json.loads(job.model_dump_json()), "limit_s": limit_s}
        try:
            self.process.stdin.write(json.dumps(request).encode() + b"\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            return IsolatedRun(outcome=None, died="the evaluator worker is gone")
        line = self._read_line(limit_s + _GRACE_S)
        if line is None:
            self.close()
            return IsolatedRun(outcome=None, timed_out=True)
        if not line:
            return IsolatedRun(outcome=None, died="the evaluator worker exited")
        reply = json.loads(line)
        outcome = reply.get("outcome")
        return IsolatedRun(
            outcome=JobOutcome.model_validate(outcome) if outcome is not None else None,
            timed_out=bool(reply.get("timed_out")),
            died=reply.get("died"),
        )

    def _read_line(self, wait_s: float) -> bytes | None:
        """The next reply line; b"" at end of stream; None after ``wait_s`` without one."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + wait_s
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                if not selector.select(left):
                    continue
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    return b""
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                if self.process.stdin is not None:
                    self.process.stdin.close()
                self.process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


class WorkerPool:
    """Up to ``size`` worker processes, shared by the threads that score tasks."""

    def __init__(self, size: int = 1) -> None:
        self.size = max(1, size)
        self._idle: queue.Queue[WorkerProcess] = queue.Queue()
        self._started = 0
        self._all: list[WorkerProcess] = []
        self._lock = threading.Lock()
        self._closed = False

    def _acquire(self) -> WorkerProcess:
        with self._lock:
            if self._idle.empty() and self._started < self.size:
                self._started += 1
                worker = WorkerProcess()
                self._all.append(worker)
                return worker
        return self._idle.get()

    def _release(self, worker: WorkerProcess) -> None:
        if not worker.alive():
            with self._lock:
                self._all.remove(worker)
                replacement = WorkerProcess()
                self._all.append(replacement)
            worker = replacement
        self._idle.put(worker)

    def run(self, job: TaskJob, limit_s: float) -> IsolatedRun:
        """Run ``job`` on a free worker (waiting for one if all are busy)."""
        if self._closed:
            raise RuntimeError("the worker pool is closed")
        worker = self._acquire()
        try:
            return worker.run(job, limit_s)
        finally:
            self._release(worker)

    def close(self) -> None:
        self._closed = True
        with self._lock:
            workers, self._all = self._all, []
        for worker in workers:
            worker.close()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
