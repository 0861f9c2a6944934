"""The service keeps serving, and other runs finish, after the inputs that killed it
(issue 37, rows 7 and 8).

``SELECT * FROM enable_logging(storage='file', storage_path='/x')`` on a DuckDB
database aborted the process (SIGABRT) and 1,000 nested parentheses in a PRQL
text made prqlc segfault: runs are threads of ``acts-sql serve``, so either took
the service down and every run in progress came back ``interrupted``. Here the
real service runs in its own process; both hostile runs and a normal one are
sent at once, with the scripted model answering slowly so that all three are in
progress together.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import duckdb
import httpx

from server.process import ServiceProcess
from server.service import service_config

ABORT_INPUT = "SELECT * FROM enable_logging(storage='file', storage_path='/x')"
CRASH_INPUT = "from customers | select {x = " + "(" * 1000 + "1" + ")" * 1000 + "}"
NORMAL_INPUT = "SELECT count(*) FROM customers"


def shop(tmp_path: Path) -> Path:
    path = tmp_path / "shop.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute("CREATE TABLE customers AS SELECT range AS id FROM range(3)")
    return path


def submit(client: httpx.Client, sql: str, **extra: Any) -> str:
    body = {"database": "shop", "question": "q", "sql": sql, "wait": False, **extra}
    body["options"] = {"method": "raw"}
    reply = client.post("/v1/correct", json=body)
    assert reply.status_code == 202, reply.text
    return str(reply.json()["run_id"])


def finished(client: httpx.Client, run_id: str, deadline: float) -> dict[str, Any]:
    """The run's final state (a result, or a failed status)."""
    while time.monotonic() < deadline:
        body: dict[str, Any] = client.get(f"/v1/runs/{run_id}").json()
        if body["status"] not in ("queued", "running"):
            return body
        time.sleep(0.1)
    raise AssertionError(f"run {run_id} did not end")


def test_the_service_survives_a_duckdb_abort_and_a_prql_crash_input(tmp_path: Path) -> None:
    db = shop(tmp_path)
    script = {"correct": ["```sql\nSELECT 1\n```"] * 8}
    config = service_config(
        tmp_path, script=script, delay_s=1.0, databases={"shop": {"url": f"duckdb:///{db}"}}
    )
    with ServiceProcess(config) as svc, svc.client() as client:
        normal = submit(client, NORMAL_INPUT)
        abort = submit(client, ABORT_INPUT)
        crash = submit(client, CRASH_INPUT, language="prql")
        deadline = time.monotonic() + 60
        results = {
            name: finished(client, run_id, deadline)
            for name, run_id in (("normal", normal), ("abort", abort), ("crash", crash))
        }
        health = client.get("/healthz")
        after = submit(client, NORMAL_INPUT)
        again = finished(client, after, time.monotonic() + 30)
        alive = svc._proc is not None and svc._proc.poll() is None
    assert alive, svc.log()[-3000:]
    assert health.status_code == 200 and health.json()["status"] == "ok"
    assert results["normal"]["status"] == "finished", results["normal"]
    assert results["normal"]["accepted"] is True
    assert again["status"] == "finished"
    for name, messages in (
        # the guard's function allowlist blocks it first; the locked settings would next
        ("abort", ("enable_logging()", "changing DuckDB settings is not allowed")),
        ("crash", ("brackets nested 1001 deep; at most 128",)),
    ):
        body = results[name]
        assert body["status"] in ("finished", "failed"), (name, body["status"])
        # the hostile text is never the answer (the model's harmless SELECT 1 may be)
        assert body.get("sql") != body.get("original_sql"), name
        original = [e for e in body.get("trace", []) if e.get("purpose") == "original"]
        assert original and any(m in str(original[0]) for m in messages), (name, original[:1])
    assert results["crash"]["accepted"] is False  # SELECT 1 does not compile as PRQL
    assert not Path("/x").exists()
    assert "interrupted" not in {r["status"] for r in results.values()}
