"""A log-analytics database, generated from a seed (no downloads): the `bench logs` data.

Four tables in one DuckDB file, two weeks of traffic (2025-03-01 to 2025-03-15 UTC):

- ``services``: 12 services (name, team, tier, language);
- ``deployments``: 120 deployments (the version each one shipped, time,
  status ``succeeded``, ``failed`` (the rollout failed: the version never
  went live) or ``rolled_back`` (live until rolled back), who deployed);
- ``requests``: one row per HTTP request (time, service, method, path,
  status, latency in ms, bytes, user agent, region, user id; NULL user for
  bots and health checks); a million rows at full size;
- ``errors``: one row per server error (5xx), with the error type and a
  stack-trace-like message.

The data has structure that questions can find: a daily traffic curve,
per-service latency, a burst of errors after each deployment that was rolled
back (until it was), a latency regression after some deployments, bots
without users, health checks, mobile and desktop user agents.

The same seed and size always give the same rows (`checksum`); rows are drawn
with Python's `random.Random`, never from the clock or the machine.
"""

from __future__ import annotations

import csv
import hashlib
import random
import tempfile
from datetime import datetime, timedelta
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from acts_sql.bench.errors import import_driver
from acts_sql.bench.logs.catalog import (
    DEPLOYERS,
    ERROR_KINDS,
    REGIONS,
    SERVICES,
    USER_AGENTS,
    ServiceSpec,
)

START = datetime(2025, 3, 1)
DAYS = 14
DEPLOYMENTS = 120
USERS = 5000
DEFAULT_SEED = 16

SCHEMA = (
    "CREATE TABLE services (service_id INTEGER PRIMARY KEY, name VARCHAR NOT NULL, "
    "team VARCHAR NOT NULL, tier INTEGER NOT NULL, language VARCHAR NOT NULL)",
    "CREATE TABLE deployments (deployment_id INTEGER PRIMARY KEY, service_id INTEGER NOT NULL "
    "REFERENCES services (service_id), version VARCHAR NOT NULL, deployed_at TIMESTAMP NOT NULL, "
    "status VARCHAR NOT NULL, deployed_by VARCHAR NOT NULL)",
    "CREATE TABLE requests (request_id BIGINT PRIMARY KEY, service_id INTEGER NOT NULL "
    "REFERENCES services (service_id), ts TIMESTAMP NOT NULL, method VARCHAR NOT NULL, "
    "path VARCHAR NOT NULL, status INTEGER NOT NULL, latency_ms DOUBLE NOT NULL, "
    "bytes INTEGER NOT NULL, user_agent VARCHAR NOT NULL, region VARCHAR NOT NULL, "
    "user_id INTEGER)",
    "CREATE TABLE errors (error_id BIGINT PRIMARY KEY, request_id BIGINT NOT NULL "
    "REFERENCES requests (request_id), service_id INTEGER NOT NULL, ts TIMESTAMP NOT NULL, "
    "level VARCHAR NOT NULL, error_type VARCHAR NOT NULL, message VARCHAR NOT NULL)",
)
TABLES = ("services", "deployments", "requests", "errors")
KEYS = {"services": "service_id", "deployments": "deployment_id", "requests": "request_id",
        "errors": "error_id"}  # fmt: skip


class LogSize(StrEnum):
    SMALL = "small"
    """20,000 requests: the test suite's size (a second to build)."""
    FULL = "full"
    """1,000,000 requests: the benchmark's size (a few minutes to build on 2 cores)."""

    @property
    def requests(self) -> int:
        return 20_000 if self is LogSize.SMALL else 1_000_000


class LogDatabase(BaseModel):
    """A generated database: where it is and what it holds."""

    path: Path
    size: LogSize
    seed: int
    rows: dict[str, int]
    checksum: str


class _Deployment(BaseModel):
    deployment_id: int
    service_id: int
    version: str
    deployed_at: datetime
    status: str
    deployed_by: str
    error_until: datetime | None = None
    """Rolled back: the service fails often from deployed_at until then."""
    slowdown: float = 1.0
    """Latency factor from this deployment on (until the service's next one)."""


def generate(path: Path, size: LogSize = LogSize.SMALL, seed: int = DEFAULT_SEED) -> LogDatabase:
    """Write the database to `path` (a new DuckDB file; an existing one is replaced)."""
    duckdb: Any = import_driver("duckdb", "the log database", "duckdb")

    rng = random.Random(f"acts-sql-logs/{seed}")
    deployments = _deployments(rng)
    requests, errors = _traffic(rng, size.requests, deployments)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.unlink(missing_ok=True)
    with duckdb.connect(str(partial)) as conn, tempfile.TemporaryDirectory() as tmp:
        for statement in SCHEMA:
            conn.execute(statement)
        tables: dict[str, list[tuple[Any, ...]]] = {
            "services": [s.row(i) for i, s in enumerate(SERVICES, 1)],
            "deployments": [_deployment_row(d) for d in deployments],
            "requests": requests,
            "errors": errors,
        }
        for name, rows in tables.items():
            _load(conn, name, rows, Path(tmp))
        conn.execute("CHECKPOINT")
    partial.replace(path)
    return LogDatabase(
        path=path,
        size=size,
        seed=seed,
        rows={name: len(rows) for name, rows in tables.items()},
        checksum=checksum(path),
    )


def checksum(path: Path) -> str:
    """SHA-256 over every row of every table, in key order, as the database holds them."""
    duckdb: Any = import_driver("duckdb", "the log database", "duckdb")
    digest = hashlib.sha256()
    with duckdb.connect(str(path), read_only=True) as conn:
        for table in TABLES:
            cursor = conn.execute(f"SELECT * FROM {table} ORDER BY {KEYS[table]}")
            digest.update(f"[{table}]".encode())
            while batch := cursor.fetchmany(10_000):
                for row in batch:
                    digest.update(repr(row).encode())
    return digest.hexdigest()


def _load(conn: Any, table: str, rows: list[tuple[Any, ...]], tmp: Path) -> None:
    """Bulk load through a CSV file (DuckDB reads it far faster than row inserts)."""
    file = tmp / f"{table}.csv"
    with file.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerows(("" if v is None else _text(v) for v in row) for row in rows)
    options = "FORMAT csv, HEADER false, DELIMITER ',', QUOTE '\"', ESCAPE '\"', NULL ''"
    conn.execute(f"COPY {table} FROM '{file.as_posix()}' ({options}, AUTO_DETECT false)")


def _text(value: Any) -> str:
    if isinstance(value, datetime):
        return value.isoformat(sep=" ", timespec="milliseconds")
    return str(value)


# ------------------------------------------------------------------ deployments


def _deployments(rng: random.Random) -> list[_Deployment]:
    """DEPLOYMENTS deployments spread over the window, during working hours."""
    found: list[_Deployment] = []
    versions = {i: [rng.randint(1, 4), rng.randint(0, 9), 0] for i in range(1, len(SERVICES) + 1)}
    weights = [s.deploys for s in SERVICES]
    for _ in range(DEPLOYMENTS):
        service_id = rng.choices(range(1, len(SERVICES) + 1), weights=weights)[0]
        day = rng.randrange(DAYS)
        at = START + timedelta(days=day, hours=rng.randint(8, 17), minutes=rng.randrange(60),
                               seconds=rng.randrange(60))  # fmt: skip
        deployer = rng.choice(DEPLOYERS)
        found.append(_Deployment(deployment_id=0, service_id=service_id, version="",
                                 deployed_at=at, status="", deployed_by=deployer))  # fmt: skip
    found.sort(key=lambda d: (d.deployed_at, d.service_id))
    for number, deployment in enumerate(found, 1):
        version = versions[deployment.service_id]
        roll = rng.random()
        if roll < 0.12:
            deployment.status = "rolled_back"
            deployment.error_until = deployment.deployed_at + timedelta(minutes=rng.randint(20, 90))
        elif roll < 0.2:
            deployment.status = "failed"  # the rollout itself failed: traffic unaffected
        else:
            deployment.status = "succeeded"
            deployment.slowdown = 1.6 if rng.random() < 0.15 else 1.0
        # every attempt ships a new version; the live one is the last that succeeded
        version[2] += 1
        if rng.random() < 0.2:
            version[1], version[2] = version[1] + 1, 0
        deployment.deployment_id = number
        deployment.version = f"v{version[0]}.{version[1]}.{version[2]}"
    return found


def _deployment_row(d: _Deployment) -> tuple[Any, ...]:
    return (d.deployment_id, d.service_id, d.version, d.deployed_at, d.status, d.deployed_by)


# ------------------------------------------------------------------ traffic

_HOUR_WEIGHT = [0.25, 0.2, 0.15, 0.15, 0.2, 0.3, 0.5, 0.8, 1.1, 1.3, 1.4, 1.45,
                1.5, 1.45, 1.4, 1.35, 1.3, 1.25, 1.2, 1.1, 0.95, 0.75, 0.5, 0.35]  # fmt: skip


def _timestamps(rng: random.Random, n: int) -> list[datetime]:
    """`n` times over the window, sorted, following the daily curve (busier on weekdays)."""
    hours = [(day, hour) for day in range(DAYS) for hour in range(24)]
    weights = [
        _HOUR_WEIGHT[hour] * (0.7 if (START + timedelta(days=day)).weekday() >= 5 else 1.0)
        for day, hour in hours
    ]
    picked = rng.choices(hours, weights=weights, k=n)
    times = [
        START + timedelta(days=day, hours=hour, milliseconds=rng.randrange(3_600_000))
        for day, hour in picked
    ]
    times.sort()
    return times


class _ServiceState:
    """What a service's requests depend on at a point in time: its deployments."""

    def __init__(self, service_id: int, deployments: list[_Deployment]) -> None:
        self.own = [d for d in deployments if d.service_id == service_id]

    def at(self, ts: datetime) -> tuple[bool, float]:
        """(in an error burst, latency factor) at `ts`."""
        burst, slowdown = False, 1.0
        for d in self.own:
            if d.deployed_at > ts:
                break
            if d.status == "succeeded":
                slowdown = d.slowdown
            if d.error_until is not None and ts < d.error_until:
                burst = True
        return burst, slowdown


def _traffic(
    rng: random.Random, n: int, deployments: list[_Deployment]
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    states = {i: _ServiceState(i, deployments) for i in range(1, len(SERVICES) + 1)}
    service_weights = [s.traffic for s in SERVICES]
    agent_weights = [a.weight for a in USER_AGENTS]
    region_weights = [w for _, w in REGIONS]
    requests: list[tuple[Any, ...]] = []
    errors: list[tuple[Any, ...]] = []
    for request_id, ts in enumerate(_timestamps(rng, n), 1):
        service_id = rng.choices(range(1, len(SERVICES) + 1), weights=service_weights)[0]
        spec = SERVICES[service_id - 1]
        agent = rng.choices(USER_AGENTS, weights=agent_weights)[0]
        burst, slowdown = states[service_id].at(ts)
        path, method = spec.pick_route(rng, agent.probe)
        status = _status(rng, spec, method, burst, agent.probe)
        latency = _latency(rng, spec, status, slowdown, agent.probe)
        size = 0 if status in (204, 304) else int(rng.lognormvariate(7.5, 0.9))
        user = None if agent.bot or agent.probe else rng.randint(1, USERS)
        region = rng.choices(REGIONS, weights=region_weights)[0][0]
        requests.append((request_id, service_id, ts, method, path, status, latency, size,
                         agent.text, region, user))  # fmt: skip
        if status >= 500:
            errors.append(_error(rng, len(errors) + 1, request_id, service_id, ts, spec, status))
    return requests, errors


def _status(rng: random.Random, spec: ServiceSpec, method: str, burst: bool, probe: bool) -> int:
    if probe:
        return 200 if rng.random() > 0.002 else 503
    failure = spec.error_rate * (12 if burst else 1)
    roll = rng.random()
    if roll < failure:
        return rng.choices((500, 502, 503, 504), weights=(5, 2, 2, 1.5))[0]
    roll = rng.random()
    if roll < 0.025:
        return 404
    if roll < 0.035:
        return rng.choice((400, 401, 403))
    if roll < 0.04:
        return 429
    if method == "POST":
        return 201 if rng.random() < 0.7 else 200
    if method == "DELETE":
        return 204
    return 304 if rng.random() < 0.05 else 200


def _latency(
    rng: random.Random, spec: ServiceSpec, status: int, slowdown: float, probe: bool
) -> float:
    if probe:
        return round(rng.uniform(0.5, 3.0), 1)
    if status == 504:
        return round(rng.uniform(3000, 3100), 1)
    value = rng.lognormvariate(spec.latency_mu, spec.latency_sigma) * slowdown
    if status >= 500:
        value *= 2.5
    if rng.random() < 0.004:  # a rare very slow request
        value *= rng.uniform(8, 20)
    return round(min(value, 30_000.0), 1)


def _error(
    rng: random.Random,
    error_id: int,
    request_id: int,
    service_id: int,
    ts: datetime,
    spec: ServiceSpec,
    status: int,
) -> tuple[Any, ...]:
    kind = ERROR_KINDS["timeout" if status == 504 else rng.choice(spec.failure_modes)]
    level = "FATAL" if kind.fatal else "ERROR"
    message = kind.message(rng, spec)
    at = ts + timedelta(milliseconds=rng.randint(1, 50))
    return (error_id, request_id, service_id, at, level, kind.error_type, message)
