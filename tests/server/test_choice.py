"""Asking the person through the service: a run started with `ask` emits `choice_needed`
and waits; `POST /v1/runs/{id}/choice` continues it (409 when it does not wait, 404 for no
such run, 422 for a reading it did not offer)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx

from engine.test_ask_person import SECOND, script
from server.service import running_service, service_config


def body(task: Any, **extra: object) -> dict[str, object]:
    return {
        "database": "demo",
        "question": task.question,
        "sql": task.sql,
        "options": {"candidates": 1},
        **extra,
    }


def until(client: httpx.Client, run_id: str, done: Any) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        reply = client.get(f"/v1/runs/{run_id}").json()
        if done(reply):
            return reply
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} did not get there: {reply}")


def waiting(service: Any, run_id: str) -> bool:
    run = service.registry.get(run_id)
    return bool(run.choice and run.choice.offered())


def test_a_run_that_asks_waits_for_the_choice(tmp_path: Path, figure3):
    config = service_config(tmp_path, script=script(figure3.sql))
    with running_service(config) as service, service.client() as client:
        started = client.post("/v1/correct", json=body(figure3, ask=True, wait=False))
        assert started.status_code == 202, started.text
        run_id = started.json()["run_id"]
        deadline = time.monotonic() + 30
        while not waiting(service, run_id) and time.monotonic() < deadline:
            time.sleep(0.05)
        events = service.registry.get(run_id).events_from(0)[0]
        needed = [e for e in events if e.kind == "choice_needed"]
        bad = client.post(f"/v1/runs/{run_id}/choice", json={"reading": "n7"})
        chosen = client.post(f"/v1/runs/{run_id}/choice", json={"reading": "n1.2"})
        finished = until(client, run_id, lambda r: r.get("status") == "finished")
        late = client.post(f"/v1/runs/{run_id}/choice", json={"reading": "n1.2"})
        unknown = client.post("/v1/runs/nope/choice", json={"reading": "n1.2"})

    assert len(needed) == 1 and [r["id"] for r in needed[0].data.readings] == ["n1.1", "n1.2"]
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "unknown_reading"
    assert chosen.status_code == 200, chosen.text
    assert finished["sql"] == SECOND and finished["accepted"] is False
    assert "the person chose reading n1.2" in finished["reason"]
    assert late.status_code == 409 and late.json()["error"]["code"] == "not_waiting"
    assert unknown.status_code == 404


def test_without_ask_the_run_never_waits(tmp_path: Path, figure3):
    config = service_config(tmp_path, script=script(figure3.sql))
    with running_service(config) as service, service.client() as client:
        reply = client.post("/v1/correct", json=body(figure3))
        run_id = reply.json()["run_id"]
        refused = client.post(f"/v1/runs/{run_id}/choice", json={"reading": "n1.2"})
    assert reply.status_code == 200
    assert not [e for e in reply.json()["trace"] if e["kind"] == "choice_needed"]
    assert refused.status_code == 409


def test_the_view_key_may_answer_the_choice_of_its_run_only(tmp_path: Path, figure3):
    config = service_config(tmp_path, script=script(figure3.sql))
    with running_service(config) as service, service.client() as client:
        started = client.post("/v1/correct", json=body(figure3, ask=True, wait=False)).json()
        run_id = started["run_id"]
        key = started["links"]["viewer"].split("?key=")[1]
        other = client.post("/v1/correct", json=body(figure3, ask=True, wait=False)).json()
        deadline = time.monotonic() + 30
        while not waiting(service, run_id) and time.monotonic() < deadline:
            time.sleep(0.05)
        with service.client(token=None) as browser:
            no_key = browser.post(f"/v1/runs/{run_id}/choice", json={"reading": "n1.2"})
            wrong_run = browser.post(
                f"/v1/runs/{other['run_id']}/choice?key={key}", json={"reading": "n1.2"}
            )
            not_a_choice = browser.post(f"/v1/correct?key={key}", json=body(figure3))
            chosen = browser.post(f"/v1/runs/{run_id}/choice?key={key}", json={"reading": "n1.2"})
        finished = until(client, run_id, lambda r: r.get("status") == "finished")
        client.post(f"/v1/runs/{other['run_id']}/choice", json={"reading": "n1.1"})

    assert no_key.status_code == 401
    assert wrong_run.status_code in (401, 403, 404) and "key" in wrong_run.text
    assert not_a_choice.status_code == 401
    assert chosen.status_code == 200, chosen.text
    assert finished["sql"] == SECOND
