"""Measures the engine's own overhead with the scripted backend.

1. Zero LLM latency: each demo task is corrected REPEAT times; the script
   prints the median wall time per correction, per executed node, the time
   spent in SQL statements, and what is left (engine + prompt building).
2. Simulated latency: the Figure 3 scenario with a scripted backend that
   sleeps DELAY seconds per call; prints wall time and LLM calls.

Numbers come from the run's own usage and trace events.

    .venv/bin/python scripts/bench_engine.py [--repeat 30] [--delay 1.0]
"""

from __future__ import annotations

import argparse
import statistics
import time

from acts_sql import correct
from acts_sql.cli.demo import script_path
from acts_sql.demo import demo_db_path, load_tasks
from acts_sql.llm.scripted import ScriptedBackend


def one_run(task, delay: float = 0.0):
    llm = ScriptedBackend.from_file(script_path(task.id), delay_s=delay)
    started = time.perf_counter()
    result = correct(f"sqlite:///{demo_db_path()}", task.question, task.sql, llm=llm)
    wall = time.perf_counter() - started
    nodes = sum(1 for e in result.trace if e.kind == "node_started")
    sql_s = sum(e.data.get("seconds", 0.0) for e in result.trace if e.kind == "statement")
    return result, wall, nodes, sql_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--delay", type=float, default=1.0)
    args = parser.parse_args()

    tasks = load_tasks()
    print(f"engine overhead, scripted backend with zero latency, {args.repeat} runs per task")
    print(
        f"{'task':10} {'accepted':>8} {'calls':>5} {'nodes':>5} {'median ms':>10} "
        f"{'per node ms':>11} {'sql ms':>7} {'llm ms':>7}"
    )
    for task in tasks:
        one_run(task)  # warm caches (templates, imports)
        walls, sqls, llms = [], [], []
        for _ in range(args.repeat):
            result, wall, nodes, sql_s = one_run(task)
            walls.append(wall)
            sqls.append(sql_s)
            llms.append(result.usage.llm_seconds)
        med = statistics.median(walls)
        print(
            f"{task.id:10} {result.accepted!s:>8} {result.usage.llm_calls:>5} {nodes:>5} "
            f"{med * 1000:>10.1f} {med * 1000 / nodes:>11.2f} "
            f"{statistics.median(sqls) * 1000:>7.1f} {statistics.median(llms) * 1000:>7.1f}"
        )

    figure3 = next(t for t in tasks if t.id == "figure3")
    result, wall, nodes, _ = one_run(figure3, delay=args.delay)
    print(
        f"\nfigure3 with {args.delay:g} s per LLM call: wall {wall:.2f} s, "
        f"{result.usage.llm_calls} calls, {nodes} nodes, accepted={result.accepted}, "
        f"overhead beyond the calls {wall - result.usage.llm_calls * args.delay:.3f} s"
    )


if __name__ == "__main__":
    main()
