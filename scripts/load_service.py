"""Bounded load test of `POST /v1/correct`: requests per second and latency percentiles.

By default it starts `acts-sql serve` itself (a second process, on a free
127.0.0.1 port) with the scripted Figure 3 backend and the demo database, so
the numbers are the service's own overhead plus the engine's work on SQLite;
no model is involved. It sends a fixed number of requests from N concurrent
clients (keep-alive connections), each with a timeout, then stops the
service and prints a summary (and JSON with --json), with the CPU time the
service process used per request (Linux: /proc), which other jobs on the
machine disturb less than the rate. It only ever talks to loopback addresses.

    .venv/bin/python scripts/load_service.py                  # 400 requests, 8 clients
    .venv/bin/python scripts/load_service.py --requests 1000 --clients 8 --json
    .venv/bin/python scripts/load_service.py --url http://127.0.0.1:8000 --token T --database demo
    .venv/bin/python scripts/load_service.py --store memory        # runs kept in memory only
    .venv/bin/python scripts/load_service.py --store postgresql://u:pw@127.0.0.1:5432/runs

The service's run store is the default SQLite file (in the temporary
directory) unless --store names another: "memory", "sqlite" or a
postgresql:// URL; --store-batch sets its [store] max_batch.
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import json
import os
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "src" / "acts_sql" / "demo" / "scripts" / "figure3.json"


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--requests", type=int, default=400, help="total requests (default 400)")
    p.add_argument("--clients", type=int, default=8, help="concurrent clients (default 8)")
    p.add_argument("--warmup", type=int, default=16, help="requests before measuring")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds per request")
    p.add_argument("--max-seconds", type=float, default=300.0, help="stop sending after this")
    p.add_argument("--url", help="an already running service (loopback only)")
    p.add_argument("--token", help="bearer token for --url")
    p.add_argument("--database", default="demo", help="database name for --url")
    p.add_argument(
        "--baseline", type=int, default=50, help="also time N corrections in-process (0: no)"
    )
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument(
        "--store",
        default="sqlite",
        help='the started service\'s run store: "sqlite" (default), "memory", postgresql://...',
    )
    p.add_argument("--store-batch", type=int, help="[store] max_batch (default: the service's)")
    args = p.parse_args()
    if args.requests < 1 or args.clients < 1 or args.requests > 100_000:
        p.error("--requests must be 1..100000 and --clients at least 1")
    if args.url and not args.token:
        p.error("--url needs --token")
    if args.url:
        host = urlsplit(args.url).hostname or ""
        loopback = host == "localhost"
        with contextlib.suppress(ValueError):
            loopback = loopback or ipaddress.ip_address(host).is_loopback
        if not loopback:
            p.error("--url must be a loopback address (127.0.0.0/8, ::1 or localhost)")
    return args


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class OwnService:
    """`acts-sql serve` in a subprocess, with a temporary configuration."""

    def __init__(self, clients: int, store: str, store_batch: int | None) -> None:
        from acts_sql.demo import demo_db_path

        self.token = secrets.token_urlsafe(24)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._dir = tempfile.TemporaryDirectory(prefix="acts-sql-load-")
        config = Path(self._dir.name) / "service.toml"
        config.write_text(
            "[llm]\n"
            f"spec = {json.dumps('scripted:' + str(SCRIPT))}\n"
            "[auth]\n"
            f"tokens = [{json.dumps(self.token)}]\n"
            "[limits]\n"
            f"max_concurrent_runs = {clients}\n"
            "[databases.demo]\n"
            f"url = {json.dumps('sqlite:///' + str(demo_db_path()))}\n"
            "[store]\n"
            + ("" if store == "sqlite" else f"url = {json.dumps(store)}\n")
            + ("" if store_batch is None else f"max_batch = {store_batch}\n")
        )
        acts_sql = Path(sys.executable).parent / "acts-sql"
        self._log = open(Path(self._dir.name) / "serve.log", "w+")  # noqa: SIM115
        self._proc = subprocess.Popen(
            [str(acts_sql), "serve", "--config", str(config), "--port", str(self.port)],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "ACTS_SQL_TOKENS": ""},
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(self.url + "/healthz", timeout=1).raise_for_status()
                return
            except httpx.HTTPError:
                if self._proc.poll() is not None or time.monotonic() > deadline:
                    self._log.seek(0)
                    self.stop()
                    raise SystemExit("acts-sql serve did not start:\n" + self._log.read()) from None
                time.sleep(0.1)

    def cpu_seconds(self) -> float | None:
        """CPU time (user + system) the service process has used so far; None off Linux."""
        try:
            fields = Path(f"/proc/{self._proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        if self._proc.poll() is None:
            self._proc.send_signal(signal.SIGINT)
            try:
                self._proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(timeout=5)
        self._log.close()
        self._dir.cleanup()


def body(database: str) -> dict[str, Any]:
    from acts_sql.demo import get_task

    task = get_task("figure3")
    return {"database": database, "question": task.question, "sql": task.sql}


def load(
    url: str,
    token: str,
    payload: dict[str, Any],
    *,
    total: int,
    clients: int,
    timeout: float,
    max_seconds: float,
) -> dict[str, Any]:
    """Send `total` requests from `clients` threads; latencies and outcomes."""
    latencies: list[float] = []
    statuses: dict[str, int] = {}
    accepted = 0
    lock = threading.Lock()
    remaining = [total]
    stop_at = time.monotonic() + max_seconds
    start = threading.Barrier(clients + 1)

    def client() -> None:
        nonlocal accepted
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=url, headers=headers, timeout=timeout) as http:
            start.wait()
            while True:
                with lock:
                    if remaining[0] <= 0 or time.monotonic() > stop_at:
                        return
                    remaining[0] -= 1
                began = time.perf_counter()
                try:
                    reply = http.post("/v1/correct", json=payload)
                    outcome = str(reply.status_code)
                    ok = reply.status_code == 200 and reply.json().get("accepted") is True
                except httpx.HTTPError as exc:
                    outcome, ok = type(exc).__name__, False
                elapsed = time.perf_counter() - began
                with lock:
                    latencies.append(elapsed)
                    statuses[outcome] = statuses.get(outcome, 0) + 1
                    accepted += ok

    threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
    for thread in threads:
        thread.start()
    start.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join(max_seconds + timeout + 5)
    wall = time.perf_counter() - began
    return {"latencies": latencies, "statuses": statuses, "accepted": accepted, "wall": wall}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]


def baseline(runs: int) -> float:
    """Mean seconds of one correction in-process (no HTTP): the engine's share."""
    from acts_sql import correct
    from acts_sql.demo import demo_db_path, get_task
    from acts_sql.llm.scripted import ScriptedBackend

    task = get_task("figure3")
    times = []
    for _ in range(3):  # warm up
        correct(str(demo_db_path()), task.question, task.sql, llm=ScriptedBackend.from_file(SCRIPT))
    for _ in range(runs):
        began = time.perf_counter()
        correct(str(demo_db_path()), task.question, task.sql, llm=ScriptedBackend.from_file(SCRIPT))
        times.append(time.perf_counter() - began)
    return statistics.mean(times)


def _shown(store: str) -> str:
    """The store without its password."""
    if "://" not in store:
        return store
    from acts_sql.db.url import parse_url

    return parse_url(store).redacted()


def main() -> int:
    args = parse_args()
    service = None if args.url else OwnService(args.clients, args.store, args.store_batch)
    url = args.url or service.url  # type: ignore[union-attr]
    token = args.token or service.token  # type: ignore[union-attr]
    database = args.database if args.url else "demo"
    try:
        payload = body(database)
        if args.warmup:
            load(
                url,
                token,
                payload,
                total=args.warmup,
                clients=args.clients,
                timeout=args.timeout,
                max_seconds=args.max_seconds,
            )
        cpu_before = service.cpu_seconds() if service is not None else None
        run = load(
            url,
            token,
            payload,
            total=args.requests,
            clients=args.clients,
            timeout=args.timeout,
            max_seconds=args.max_seconds,
        )
        cpu_after = service.cpu_seconds() if service is not None else None
    finally:
        if service is not None:
            service.stop()
    lat = run["latencies"]
    summary: dict[str, Any] = {
        "requests": len(lat),
        "clients": args.clients,
        "store": None if args.url else _shown(args.store),
        "statuses": run["statuses"],
        "accepted": run["accepted"],
        "seconds": round(run["wall"], 3),
        "requests_per_second": round(len(lat) / run["wall"], 1) if run["wall"] else None,
        "latency_ms": {
            "p50": round(percentile(lat, 50) * 1000, 1),
            "p95": round(percentile(lat, 95) * 1000, 1),
            "p99": round(percentile(lat, 99) * 1000, 1),
            "max": round(max(lat) * 1000, 1) if lat else None,
            "mean": round(statistics.mean(lat) * 1000, 1) if lat else None,
        },
    }
    if cpu_before is not None and cpu_after is not None and lat:
        summary["service_cpu_ms_per_request"] = round((cpu_after - cpu_before) / len(lat) * 1000, 2)
    if args.baseline and not args.url:
        summary["in_process_correction_ms"] = round(baseline(args.baseline) * 1000, 2)
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        ms = summary["latency_ms"]
        print(
            f"{summary['requests']} requests, {args.clients} clients, store {summary['store']}, "
            f"{summary['seconds']} s: "
            f"{summary['requests_per_second']} req/s; latency p50 {ms['p50']} ms, "
            f"p95 {ms['p95']} ms, p99 {ms['p99']} ms, max {ms['max']} ms; "
            f"statuses {summary['statuses']}, accepted {summary['accepted']}"
        )
        if "service_cpu_ms_per_request" in summary:
            print(f"service CPU per request: {summary['service_cpu_ms_per_request']} ms")
        if "in_process_correction_ms" in summary:
            print(f"one correction in-process (no HTTP): {summary['in_process_correction_ms']} ms")
    failed = len(lat) != args.requests or run["accepted"] != len(lat)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
