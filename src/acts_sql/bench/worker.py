"""The evaluator's worker process: reads jobs on stdin, runs each in a forked child.

Started by `acts_sql.bench.isolation` as ``python -m acts_sql.bench.worker``.
Protocol: one JSON object per line each way. Request: ``{"job": <TaskJob>,
"limit_s": <seconds>}``; reply: ``{"outcome": <JobOutcome> | null,
"timed_out": bool, "died": str | null}``.

Each job runs in a child forked from this single-threaded process (cheap: the
evaluator's modules are already imported), so a test case that hangs, leaks
connections or kills its interpreter takes only that child with it. The
child's stdout goes to /dev/null; only this process writes replies.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import time
from typing import Any

from acts_sql.bench.jobs import JobOutcome, TaskJob
from acts_sql.bench.phases import run_job

_CHUNK = 1 << 16
_PRELOAD = (
    "acts_sql.bench.helpers.sqlite",
    "acts_sql.bench.helpers.postgresql",
    "acts_sql.bench.helpers.mysql",
)


def preload() -> None:
    """Import the dialect helpers (and their drivers) once, before any fork."""
    import importlib

    for name in _PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:  # a driver that is not installed: its dialect fails per job
            continue


def _child(job_json: str, write_fd: int) -> None:
    """In the forked child: silence stdout, run the job, write the outcome, exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives until os._exit
    try:
        outcome = run_job(TaskJob.model_validate_json(job_json))
    except BaseException as exc:
        outcome = JobOutcome(crashed=f"{type(exc).__name__}: {exc}")
    data = outcome.model_dump_json().encode()
    view = memoryview(data)
    while view:
        written = os.write(write_fd, view)
        view = view[written:]
    os.close(write_fd)
    os._exit(0)


def run_forked(job_json: str, limit_s: float) -> dict[str, Any]:
    """Run one job in a forked child; kill it after ``limit_s`` seconds."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        os.close(read_fd)
        _child(job_json, write_fd)
    os.close(write_fd)
    chunks: list[bytes] = []
    deadline = time.monotonic() + limit_s
    timed_out = False
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([read_fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(read_fd, _CHUNK)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_fd)
        if timed_out:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    if timed_out:
        return {"outcome": None, "timed_out": True, "died": None}
    data = b"".join(chunks)
    if not data:
        return {"outcome": None, "timed_out": False, "died": _describe_exit(status)}
    return {"outcome": json.loads(data), "timed_out": False, "died": None}


def _describe_exit(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit code {os.waitstatus_to_exitcode(status)}"


def serve(stdin: Any = None, stdout: Any = None) -> None:
    """Answer job requests until stdin closes."""
    source = stdin or sys.stdin.buffer
    sink = stdout or sys.stdout.buffer
    for line in source:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            reply = run_forked(json.dumps(request["job"]), float(request["limit_s"]))
        except Exception as exc:
            reply = {"outcome": None, "timed_out": False, "died": f"bad request: {exc}"}
        sink.write(json.dumps(reply).encode() + b"\n")
        sink.flush()


if __name__ == "__main__":
    preload()
    serve()
