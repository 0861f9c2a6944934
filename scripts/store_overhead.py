"""What the run store costs per run, without HTTP: memory vs SQLite vs PostgreSQL.

Builds the service's app in this process (scripted Figure 3 backend, the
demo SQLite database) with the run store named by --store, then has its
run registry run --runs corrections, --concurrency at a time, and prints per
run: the wall time, the CPU time of the whole process, the CPU time of the
store's writer thread, and the commits and writes the store made. With the
HTTP layer gone, the store's share is easier to see than in
`scripts/load_service.py`; the CPU numbers are also less disturbed by other
jobs on the machine than the rate.

    .venv/bin/python scripts/store_overhead.py --store memory --store sqlite
    .venv/bin/python scripts/store_overhead.py --store sqlite --batch 1 --runs 200
    .venv/bin/python scripts/store_overhead.py --store postgresql://u:pw@127.0.0.1:5432/runs
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "src" / "acts_sql" / "demo" / "scripts" / "figure3.json"
TOKEN = "store-overhead-token-0123456789"


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument(
        "--store",
        action="append",
        help='"memory", "sqlite" or a postgresql:// URL; repeat to compare (default: all but pg)',
    )
    p.add_argument("--runs", type=int, default=200, help="measured runs per store (default 200)")
    p.add_argument("--concurrency", type=int, default=8, help="runs at once (default 8)")
    p.add_argument("--warmup", type=int, default=8, help="runs before measuring")
    p.add_argument("--batch", type=int, help="[store] max_batch (default: the service's)")
    p.add_argument("--json", action="store_true", help="print the summaries as JSON")
    args = p.parse_args()
    if args.runs < 1 or args.concurrency < 1:
        p.error("--runs and --concurrency must be at least 1")
    return args


def config_text(store: str, concurrency: int, batch: int | None) -> str:
    from acts_sql.demo import demo_db_path

    lines = [
        "[llm]",
        f"spec = {json.dumps('scripted:' + str(SCRIPT))}",
        "[auth]",
        f"tokens = [{json.dumps(TOKEN)}]",
        "[limits]",
        f"max_concurrent_runs = {concurrency}",
        "[databases.demo]",
        f"url = {json.dumps('sqlite:///' + str(demo_db_path()))}",
        "[store]",
    ]
    if store != "sqlite":
        lines.append(f"url = {json.dumps(store)}")
    if batch is not None:
        lines.append(f"max_batch = {batch}")
    return "\n".join(lines) + "\n"


async def drive(registry: Any, spec: Any, total: int, concurrency: int) -> None:
    """`total` runs, `concurrency` at a time; each must finish accepted."""
    remaining = [total]

    async def client() -> None:
        while remaining[0] > 0:
            remaining[0] -= 1
            run = registry.submit(spec)
            await run.wait_done()
            if run.result is None or not run.result.accepted:
                raise SystemExit(f"run {run.id} ended {run.state.value}: {run.error}")

    await asyncio.gather(*(client() for _ in range(concurrency)))


def measure(store: str, args: argparse.Namespace) -> dict[str, Any]:
    from acts_sql.demo import get_task
    from acts_sql.engine.options import CorrectionOptions
    from acts_sql.server import create_app, load_config
    from acts_sql.server.runs import RunSpec

    task = get_task("figure3")
    options = CorrectionOptions.of(max_seconds=300.0)
    spec = RunSpec("correct", "demo", task.question, task.sql, None, options)
    with tempfile.TemporaryDirectory(prefix="acts-sql-store-") as tmp:
        path = Path(tmp) / "service.toml"
        path.write_text(config_text(store, args.concurrency, args.batch))
        registry = create_app(load_config(path, environ={})).state.registry
        journal = registry.journal
        try:
            asyncio.run(drive(registry, spec, args.warmup, args.concurrency))
            before = _counters(journal)
            began, cpu = time.perf_counter(), time.process_time()
            asyncio.run(drive(registry, spec, args.runs, args.concurrency))
            wall, cpu = time.perf_counter() - began, time.process_time() - cpu
            time.sleep(0.2)  # the last commits
            after = _counters(journal)
        finally:
            registry.close()
    per_run = {k: (after[k] - before[k]) / args.runs for k in after}
    return {
        "store": "memory" if journal is None else journal.store.description,
        "runs": args.runs,
        "concurrency": args.concurrency,
        "runs_per_second": round(args.runs / wall, 1),
        "wall_ms_per_run": round(wall / args.runs * 1000, 2),
        "cpu_ms_per_run": round(cpu / args.runs * 1000, 2),
        "writer_cpu_ms_per_run": round(per_run["writer_cpu_s"] * 1000, 3),
        "commits_per_run": round(per_run["commits"], 2),
        "writes_per_run": round(per_run["writes"], 1),
    }


def _counters(journal: Any) -> dict[str, float]:
    if journal is None:
        return {"writer_cpu_s": 0.0, "commits": 0.0, "writes": 0.0}
    return {
        "writer_cpu_s": journal.writer_cpu_s,
        "commits": float(journal.commits),
        "writes": float(journal.writes),
    }


def main() -> int:
    args = parse_args()
    summaries = [measure(store, args) for store in args.store or ["memory", "sqlite"]]
    if args.json:
        print(json.dumps(summaries, indent=1))
        return 0
    for s in summaries:
        print(
            f"{s['store']}: {s['runs']} runs, {s['concurrency']} at once: "
            f"{s['runs_per_second']} runs/s, {s['wall_ms_per_run']} ms wall and "
            f"{s['cpu_ms_per_run']} ms CPU per run; the store's writer "
            f"{s['writer_cpu_ms_per_run']} ms CPU, {s['commits_per_run']} commits and "
            f"{s['writes_per_run']} writes per run"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
