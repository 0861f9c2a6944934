"""Runs survive restarts: the default SQLite store, and PostgreSQL when a server is given.

The service runs in a process of its own and is killed with SIGKILL, so
nothing it kept in memory or could still write helps the next one.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from server.process import ServiceProcess
from server.service import running_service, service_config, sse_messages
from server.test_events import check_complete, read_stream, start_run

PG_ENV = "ACTS_SQL_TEST_PG_URL"


def services_required() -> bool:
    return os.environ.get("ACTS_SQL_REQUIRE_SERVICES") == "1" or os.environ.get("CI") == "true"


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """The [store] table of a new, empty store: the default SQLite file, or a new database."""
    if request.param == "sqlite":
        yield {}
        return
    admin = os.environ.get(PG_ENV)
    if not admin:
        if services_required():
            pytest.fail(f"{PG_ENV} is not set but the services are required (CI)")
        pytest.skip(f"{PG_ENV} is not set (scripts/test.sh starts a PostgreSQL)")
    psycopg = pytest.importorskip("psycopg")
    name = f"acts_store_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield {"url": admin.rsplit("/", 1)[0] + "/" + name}
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def correct(client: httpx.Client, task: Any) -> dict[str, Any]:
    body = {"database": "demo", "question": task.question, "sql": task.sql}
    reply = client.post("/v1/correct", json=body)
    assert reply.status_code == 200, reply.text
    return reply.json()


def seen_by_a_browser(base_url: str, run: dict[str, Any]) -> tuple[str, list[dict[str, str]]]:
    """The viewer page and the event stream, opened with the view key only (no token)."""
    with httpx.Client(base_url=base_url, timeout=30) as browser:
        page = browser.get(run["links"]["viewer"])
        assert page.status_code == 200, page.text
        key = run["links"]["viewer"].split("?key=", 1)[1]
        events = read_stream(browser, run["links"]["events"], params={"key": key})
    return page.text, events


def trace_of(messages: list[dict[str, str]]) -> list[dict[str, Any]]:
    return [json.loads(m["data"]) for m in messages if m.get("event") == "trace"]


def test_finished_runs_survive_kill_9(tmp_path: Path, store: dict[str, Any], figure3):
    config = service_config(tmp_path, store=store)
    with ServiceProcess(config) as svc, svc.client() as client:
        first = correct(client, figure3)
        page, events = seen_by_a_browser(svc.base_url, first)
        last = correct(client, figure3)
        svc.kill()  # at once: `last` was answered a moment ago
    with ServiceProcess(config) as svc, svc.client() as client:
        runs = [client.get(f"/v1/runs/{run['run_id']}") for run in (first, last)]
        page_again, events_again = seen_by_a_browser(svc.base_url, first)
        replay = check_complete(read_stream(client, last["links"]["events"]))
        resumed = read_stream(client, last["links"]["events"], headers={"Last-Event-ID": "20"})
        listed = client.get("/v1/runs").json()["runs"]
        wrong_key = httpx.get(f"{svc.base_url}/runs/{first['run_id']}?key=not-the-key", timeout=30)
    # the same content as before the kill, to the byte
    assert [r.status_code for r in runs] == [200, 200]
    assert runs[0].json() == first and runs[1].json() == last
    assert page_again == page and events_again == events
    assert trace_of(events) == first["trace"] and first["accepted"] is True
    assert [e.model_dump(mode="json") for e in replay] == last["trace"]
    check_complete(resumed, first_seq=21)
    assert trace_of(resumed) == last["trace"][21:]
    assert json.loads(events[-1]["data"]) == {"status": "finished", "events": len(first["trace"])}
    assert [r["run_id"] for r in listed] == [last["run_id"], first["run_id"]]
    assert all(r["status"] == "finished" for r in listed)
    assert listed[0]["events"] == len(last["trace"]) and listed[0]["links"] == last["links"]
    assert wrong_key.status_code == 401


def first_events(client: httpx.Client, url: str, count: int) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    with client.stream("GET", url) as reply:
        for message in sse_messages(reply.iter_lines()):
            if message.get("event") == "trace":
                seen.append(json.loads(message["data"]))
            if len(seen) == count:
                return seen
    raise AssertionError(f"the run ended after {len(seen)} events")


def test_a_run_killed_midway_reads_interrupted(tmp_path: Path, store: dict[str, Any], figure3):
    config = service_config(tmp_path, delay_s=1.0, store=store)
    with ServiceProcess(config) as svc, svc.client() as client:
        started = start_run(client, figure3)
        seen = first_events(client, started["links"]["events"], 3)
        time.sleep(0.5)  # events reach the store a moment after the stream
        assert client.get(started["links"]["run"]).json()["status"] == "running"
        svc.kill()
    with ServiceProcess(config) as svc, svc.client() as client:
        status = client.get(started["links"]["run"]).json()
        messages = read_stream(client, started["links"]["events"])
        page = httpx.get(svc.base_url + started["links"]["viewer"], timeout=30)
    assert status["status"] == "interrupted", status
    assert status["error"]["code"] == "shutting_down"
    assert status["finished_at"] is not None and status["links"] == started["links"]
    events = check_complete(messages)
    assert len(events) >= 3 and status["events"] == len(events)
    assert [e.model_dump(mode="json") for e in events[:3]] == seen
    assert "run_finished" not in [e.kind for e in events]
    end = json.loads(messages[-1]["data"])
    assert end["status"] == "interrupted" and end["error"]["code"] == "shutting_down"
    assert page.status_code == 200 and started["run_id"] in page.text


def test_a_run_in_progress_at_a_clean_stop_is_interrupted(tmp_path: Path, figure3):
    config = service_config(tmp_path, delay_s=0.5)
    with ServiceProcess(config) as svc, svc.client() as client:
        started = start_run(client, figure3)
        first_events(client, started["links"]["events"], 2)
    # SIGINT: the service stops, marking the run interrupted itself
    with ServiceProcess(config) as svc, svc.client() as client:
        status = client.get(started["links"]["run"]).json()
    assert status["status"] == "interrupted"
    assert "stopped while this run was in progress" in status["error"]["message"]


def test_retention_deletes_the_oldest_finished_runs(tmp_path: Path, store: dict[str, Any], figure3):
    config = service_config(tmp_path, store={**store, "max_runs": 2})
    with running_service(config) as svc, svc.client() as client:
        ids = [correct(client, figure3)["run_id"] for _ in range(3)]
        codes = [client.get(f"/v1/runs/{run_id}").status_code for run_id in ids]
        listed = [r["run_id"] for r in client.get("/v1/runs").json()["runs"]]
    with running_service(config) as svc, svc.client() as client:
        codes_after_restart = [client.get(f"/v1/runs/{run_id}").status_code for run_id in ids]
        events = client.get(f"/v1/runs/{ids[0]}/events")
    assert codes == [404, 200, 200] and codes_after_restart == [404, 200, 200]
    assert listed == [ids[2], ids[1]]
    assert events.status_code == 404 and events.json()["error"]["code"] == "run_not_found"


def test_runs_older_than_max_age_are_deleted(tmp_path: Path, figure3):
    config = service_config(tmp_path, store={"max_age_days": 1.5 / 86_400})  # 1.5 s
    with running_service(config) as svc, svc.client() as client:
        old = correct(client, figure3)["run_id"]
    time.sleep(1.6)
    with running_service(config) as svc, svc.client() as client:  # the store prunes at open
        new = correct(client, figure3)["run_id"]
        codes = [client.get(f"/v1/runs/{run_id}").status_code for run_id in (old, new)]
    assert codes == [404, 200]


def test_a_memory_store_forgets_on_restart(tmp_path: Path, figure3):
    config = service_config(tmp_path, store={"url": "memory"})
    with running_service(config) as svc, svc.client() as client:
        run_id = correct(client, figure3)["run_id"]
        kept = client.get(f"/v1/runs/{run_id}").status_code
    with running_service(config) as svc, svc.client() as client:
        forgotten = client.get(f"/v1/runs/{run_id}").status_code
    assert (kept, forgotten) == (200, 404)
    assert not list(tmp_path.glob("*.runs.sqlite*"))


def test_the_default_store_is_a_file_next_to_the_configuration(tmp_path: Path, figure3):
    config = service_config(tmp_path)
    with running_service(config) as svc, svc.client() as client:
        correct(client, figure3)
    store = tmp_path / "service.runs.sqlite"
    assert store.exists() and (store.stat().st_mode & 0o777) == 0o600
