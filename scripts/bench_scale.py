"""Throughput of `acts-sql batch` and the gain of `--parallel`, with a sleeping scripted backend.

The backend replays the Figure 3 script and sleeps DELAY seconds per call: a stand-in for
an endpoint with that latency. The work is waiting, not computing, so the numbers hold on a
shared machine (the engine's own cost is a few milliseconds per call; see bench_engine.py).

1. `batch` over TASKS copies of the Figure 3 task, for each executor (local processes, Ray
   actors on a local cluster it starts) and each worker count: wall time, tasks per hour,
   the start-up (time to the first result less that task's own time) and the executor's
   overhead per task (steady-state time per task per worker less the correction's own).
   The paper-style estimate N x 3600 / (calls x DELAY) is printed beside each row.
2. The executors' own cost: ROUNDTRIPS tasks that do nothing, on 2 workers: the time per
   task from the first result to the last (hand-out, pickling, the result's way back).
3. One Figure 3 correction with --parallel 1, 2, 3, 4: wall time and the calls sent ahead.

    .venv/bin/python scripts/bench_scale.py [--tasks 40] [--delay 1.0] [--workers 1,2,4]
        [--executors local,ray] [--roundtrips 400] [--parts batch,roundtrip,parallel]
        [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from acts_sql import CorrectionOptions, correct
from acts_sql.batch.runner import BatchRequest, run_batch
from acts_sql.batch.tasks import BadLine, BatchJob
from acts_sql.batch.worker import BatchRecord, BatchSettings
from acts_sql.cli.demo import script_path
from acts_sql.demo import demo_db_path, load_tasks
from acts_sql.llm.scripted import ScriptedBackend
from acts_sql.scale import ExecutorKind, make_pool


class FirstResult:
    """Notes when the first result arrives, and every correction's own seconds."""

    def __init__(self) -> None:
        self.started_at = time.perf_counter()
        self.first: float | None = None
        self.seconds: list[float] = []

    def started(self, total: int) -> None:
        self.started_at = time.perf_counter()

    def skipped(self, job: BatchJob) -> None: ...

    def bad_line(self, bad: BadLine) -> None: ...

    def result(self, record: BatchRecord) -> None:
        if self.first is None:
            self.first = time.perf_counter() - self.started_at
        self.seconds.append(record.usage.seconds)


def write_tasks(folder: Path, count: int) -> Path:
    figure3 = next(t for t in load_tasks() if t.id == "figure3")
    path = folder / "tasks.jsonl"
    lines = [
        json.dumps(
            {
                "id": f"f3-{n}",
                "database": str(demo_db_path()),
                "question": figure3.question,
                "sql": figure3.sql,
            }
        )
        for n in range(count)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def one_batch(tasks: Path, out: Path, kind: ExecutorKind, workers: int, delay: float) -> str:
    settings = BatchSettings(llm=f"scripted:{script_path('figure3')}", scripted_delay_s=delay)
    request = BatchRequest(input=tasks, out=out, settings=settings, executor=kind, workers=workers)
    heard = FirstResult()
    started = time.perf_counter()
    summary = run_batch(request, listener=heard)
    wall = time.perf_counter() - started
    own = statistics.fmean(heard.seconds)
    calls = summary.usage.llm_calls.mean
    startup = (heard.first or 0.0) - heard.seconds[0]
    per_slot = (wall - startup) * workers / summary.ran
    estimate = workers * 3600 / (calls * delay)
    return (
        f"{kind.value:5} {workers:>7} {summary.ran:>5} {wall:>8.1f} "
        f"{summary.tasks_per_hour or 0:>9.0f} {estimate:>9.0f} {startup:>8.2f} "
        f"{own:>8.2f} {per_slot - own:>9.3f}"
    )


class Nothing:
    """A worker that does nothing (defined in the script: Ray and spawn carry it over)."""

    def build(self) -> Nothing:
        return self

    def run(self, payload: int) -> int:
        return payload

    def close(self) -> None:
        """Nothing to close."""


def roundtrip(kind: ExecutorKind, count: int) -> None:
    pool = make_pool(kind, 2)
    stamps: list[float] = []
    started = time.perf_counter()
    pool.run(
        Nothing(), ((str(n), n) for n in range(count)), lambda d: stamps.append(time.perf_counter())
    )
    per_task = (stamps[-1] - stamps[0]) / (len(stamps) - 1)
    print(
        f"{kind.value:5} {count} no-op tasks on 2 workers: start {stamps[0] - started:.2f} s, "
        f"then {per_task * 1000:.2f} ms per task"
    )


def parallel_gain(delay: float) -> None:
    figure3 = next(t for t in load_tasks() if t.id == "figure3")
    print(f"\nFigure 3, one correction, {delay:g} s per LLM call")
    print(f"{'parallel':>8} {'wall s':>7} {'calls':>5} {'sent ahead':>10} {'unused':>6} same")
    first = None
    for parallel in (1, 2, 3, 4):
        llm = ScriptedBackend.from_file(script_path("figure3"), delay_s=delay)
        started = time.perf_counter()
        result = correct(
            f"sqlite:///{demo_db_path()}",
            figure3.question,
            figure3.sql,
            llm=llm,
            options=CorrectionOptions(parallel=parallel),
        )
        wall = time.perf_counter() - started
        decided = (result.sql, result.accepted, result.tree)
        first = first or decided
        usage = result.usage
        print(
            f"{parallel:>8} {wall:>7.2f} {usage.llm_calls:>5} {usage.sent_ahead_llm_calls:>10} "
            f"{usage.unused_prefetches:>6} {decided == first}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--delay", type=float, default=1.0)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--executors", default="local,ray")
    parser.add_argument("--roundtrips", type=int, default=400)
    parser.add_argument("--parts", default="batch,roundtrip,parallel")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    executors = [ExecutorKind(k) for k in args.executors.split(",")]
    if "batch" in parts:
        batches(args, executors)
    if "roundtrip" in parts:
        print()
        for kind in executors:
            roundtrip(kind, args.roundtrips)
    if "parallel" in parts:
        parallel_gain(args.delay)


def batches(args: argparse.Namespace, executors: list[ExecutorKind]) -> None:
    root = args.out or Path(tempfile.mkdtemp(prefix="acts-sql-scale-"))
    root.mkdir(parents=True, exist_ok=True)
    tasks = write_tasks(root, args.tasks)
    print(f"batch of {args.tasks} Figure 3 tasks, {args.delay:g} s per LLM call ({root})")
    print(
        f"{'exec':5} {'workers':>7} {'tasks':>5} {'wall s':>8} {'tasks/h':>9} {'estimate':>9} "
        f"{'start s':>8} {'task s':>8} {'ovh/task':>9}"
    )
    for kind in executors:
        for workers in [int(w) for w in args.workers.split(",")]:
            out = root / f"{kind.value}-{workers}"
            print(one_batch(tasks, out, kind, workers, args.delay), flush=True)


if __name__ == "__main__":
    main()
