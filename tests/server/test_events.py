"""The event stream: complete, in seq order, live and replayed; runs outlive their clients."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import httpx

from acts_sql.engine.events import EVENTS, TraceEvent
from server.service import TOKEN, Service, running_service, service_config, sse_messages


def start_run(client: httpx.Client, task, **extra: object) -> dict:
    reply = client.post(
        "/v1/correct",
        json={
            "database": "demo",
            "question": task.question,
            "sql": task.sql,
            "wait": False,
            **extra,
        },
    )
    assert reply.status_code == 202, reply.text
    return reply.json()


def read_stream(client: httpx.Client, url: str, **kwargs) -> list[dict[str, str]]:
    with client.stream("GET", url, **kwargs) as reply:
        assert reply.status_code == 200
        assert reply.headers["content-type"].startswith("text/event-stream")
        return list(sse_messages(reply.iter_lines()))


def check_complete(messages: list[dict[str, str]], first_seq: int = 0) -> list[TraceEvent]:
    trace = [m for m in messages if m.get("event") == "trace"]
    events = [EVENTS.validate_json(m["data"]) for m in trace]
    seqs = [e.seq for e in events]
    assert seqs == list(range(first_seq, first_seq + len(events)))
    assert [int(m["id"]) for m in trace] == seqs
    assert messages[-1]["event"] == "end"
    return events


def wait_finished(client: httpx.Client, run_id: str, timeout: float = 20) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body = client.get(f"/v1/runs/{run_id}").json()
        if body["status"] != "running" and body["status"] != "queued":
            return body
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} did not finish")


def test_a_live_stream_is_complete_and_in_order(tmp_path: Path, figure3):
    with running_service(service_config(tmp_path, delay_s=0.05)) as svc, svc.client() as client:
        started = start_run(client, figure3)
        assert started["status"] in ("queued", "running")
        messages = read_stream(client, started["links"]["events"])
        final = client.get(started["links"]["run"]).json()
    events = check_complete(messages)
    assert events[0].kind == "run_started" and events[-1].kind == "run_finished"
    assert json.loads(messages[-1]["data"]) == {"status": "finished", "events": len(events)}
    # exactly the run's trace, nothing lost, nothing repeated
    assert [e.model_dump(mode="json") for e in events] == final["trace"]
    assert final["accepted"] is True


def test_a_finished_run_is_replayed_and_a_reader_can_resume(service: Service, figure3):
    with service.client() as client:
        run = client.post(
            "/v1/correct",
            json={"database": "demo", "question": figure3.question, "sql": figure3.sql},
        ).json()
        url = run["links"]["events"]
        replay = check_complete(read_stream(client, url))
        after = check_complete(read_stream(client, url, params={"after": 9}), first_seq=10)
        resumed = check_complete(
            read_stream(client, url, headers={"Last-Event-ID": "20"}), first_seq=21
        )
    assert [e.model_dump(mode="json") for e in replay] == run["trace"]
    assert [e.seq for e in after] == list(range(10, len(run["trace"])))
    assert [e.seq for e in resumed] == list(range(21, len(run["trace"])))


def test_a_client_that_leaves_mid_stream_does_not_stop_the_run(tmp_path: Path, figure3):
    with running_service(service_config(tmp_path, delay_s=0.1)) as svc, svc.client() as client:
        started = start_run(client, figure3)
        with client.stream("GET", started["links"]["events"]) as reply:
            seen = []
            for message in sse_messages(reply.iter_lines()):
                if message.get("event") == "trace":
                    seen.append(message)
                if len(seen) == 3:
                    break  # hang up while the run is in progress
        assert svc.registry.get(started["run_id"]).done is False
        final = wait_finished(client, started["run_id"])
        replay = check_complete(read_stream(client, started["links"]["events"]))
    assert final["status"] == "finished" and final["accepted"] is True
    assert replay[-1].kind == "run_finished"


def test_a_client_that_leaves_a_waiting_post_does_not_stop_the_run(tmp_path: Path, figure3):
    body = json.dumps({"database": "demo", "question": figure3.question, "sql": figure3.sql})
    with running_service(service_config(tmp_path, delay_s=0.1)) as svc, svc.client() as client:
        # a raw HTTP client that sends its request and hangs up before the answer
        with socket.create_connection(("127.0.0.1", svc.port), timeout=5) as raw:
            raw.sendall(
                (
                    "POST /v1/correct HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(body)}\r\n\r\n{body}"
                ).encode()
            )
            deadline = time.monotonic() + 5
            while not svc.registry.recent(1) and time.monotonic() < deadline:
                time.sleep(0.01)
        runs = client.get("/v1/runs").json()["runs"]
        assert len(runs) == 1 and runs[0]["status"] in ("queued", "running")
        final = wait_finished(client, runs[0]["run_id"])
    assert final["status"] == "finished" and final["accepted"] is True


def test_a_failed_run_ends_its_stream_with_the_error(tmp_path: Path, figure3):
    copy = tmp_path / "gone.db"
    config = service_config(tmp_path, databases={"demo": {"url": f"sqlite:///{copy}"}})
    from acts_sql.demo import demo_db_path

    copy.write_bytes(demo_db_path().read_bytes())
    with running_service(config) as svc, svc.client() as client:
        copy.unlink()
        started = start_run(client, figure3)
        messages = read_stream(client, started["links"]["events"])
    end = json.loads(messages[-1]["data"])
    assert end["status"] == "failed"
    assert end["error"]["code"] == "database_unavailable"
