"""The HTTP API over real HTTP: results, auth, validation, limits."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

import httpx
import pytest

from acts_sql.demo import DemoTask, demo_db_path
from acts_sql.engine.inputs import MAX_QUESTION_CHARS, MAX_SQL_CHARS
from acts_sql.engine.result import CorrectionResult
from acts_sql.server.errors import ApiError
from acts_sql.server.models import CorrectionResponse
from acts_sql.server.routes import check_language
from server.service import OTHER_TOKEN, TOKEN, Service, running_service, service_config
from support import demo_script


def correct_body(task: DemoTask, **extra: object) -> dict[str, object]:
    return {"database": "demo", "question": task.question, "sql": task.sql, **extra}


def with_budget(task: DemoTask, **limits: float) -> dict[str, object]:
    return correct_body(task, options={"budget": limits})


def test_correct_returns_the_fix_json_object_plus_the_run_id(service: Service, figure3):
    with service.client() as client:
        reply = client.post("/v1/correct", json=correct_body(figure3))
    assert reply.status_code == 200, reply.text
    body = reply.json()
    # every field of `acts-sql fix --json` is there, and parses as a CorrectionResult
    assert set(CorrectionResult.model_fields) <= set(body)
    result = CorrectionResult.model_validate({k: body[k] for k in CorrectionResult.model_fields})
    assert result.accepted is True
    assert result.original_sql == figure3.sql
    nodes = {n["id"]: n for n in result.tree}
    assert nodes["n1.1"]["status"] == "rejected" and nodes["n1.2"]["status"] == "accepted"
    assert body["status"] == "finished" and body["database"] == "demo"
    assert CorrectionResponse.model_validate(body).run_id == body["run_id"]
    run_id = body["run_id"]
    assert body["links"]["run"] == f"/v1/runs/{run_id}"
    # the run is kept: GET gives the same result
    with service.client() as client:
        again = client.get(f"/v1/runs/{run_id}").json()
    assert again["sql"] == body["sql"] and again["trace"] == body["trace"]


def test_generate_writes_the_sql_then_corrects_it(tmp_path: Path, figure3):
    script = demo_script("figure3")
    script["generate_sql"] = [
        json.dumps({"sql": figure3.sql, "rationale": "count bookings"}),
        *script["generate_sql"],
    ]
    with running_service(service_config(tmp_path, script=script)) as svc, svc.client() as client:
        reply = client.post("/v1/generate", json={"database": "demo", "question": figure3.question})
        no_sql = client.post(
            "/v1/generate", json={"database": "demo", "question": "q", "sql": "SELECT 1"}
        )
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["generated_initial_sql"] is True
    assert body["original_sql"] == figure3.sql
    assert body["accepted"] is True
    assert no_sql.status_code == 422 and no_sql.json()["error"]["code"] == "unknown_field"


@pytest.mark.parametrize(
    ("headers", "code"),
    [
        ({}, "unauthorized"),
        ({"Authorization": "Bearer wrong-token-0123456789abcdef"}, "invalid_token"),
        ({"Authorization": f"Bearer {TOKEN}x"}, "invalid_token"),
        ({"Authorization": f"Bearer {TOKEN[:-1]}"}, "invalid_token"),
        ({"Authorization": f"Basic {TOKEN}"}, "invalid_token"),
        ({"Authorization": "Bearer"}, "invalid_token"),
    ],
)
def test_requests_without_a_valid_token_are_refused(service: Service, figure3, headers, code):
    with httpx.Client(base_url=service.base_url, headers=headers) as client:
        replies = [
            client.post("/v1/correct", json=correct_body(figure3)),
            client.get("/v1/runs"),
            client.get("/v1/nonexistent"),  # no route discovery without a token either
        ]
    for reply in replies:
        assert reply.status_code == 401, reply.text
        assert reply.json() == {
            "error": {"code": code, "message": reply.json()["error"]["message"]}
        }
        assert reply.headers["www-authenticate"].startswith("Bearer")
    assert service.registry.recent(10) == []


def test_every_configured_token_works_and_health_is_public(service: Service):
    for token in (TOKEN, OTHER_TOKEN):
        with service.client(token) as client:
            assert client.get("/v1/runs").status_code == 200
    with service.client(None) as client:
        health = client.get("/healthz")
    assert health.status_code == 200
    assert health.json() == {"status": "ok", "active_runs": 0, "max_concurrent_runs": 4}


def test_the_view_key_opens_only_its_own_run_and_only_for_reading(service: Service, figure3):
    with service.client() as client:
        first = client.post("/v1/correct", json=correct_body(figure3)).json()
    key = first["links"]["viewer"].split("key=", 1)[1]
    run_id = first["run_id"]
    with service.client(None) as anonymous:
        assert anonymous.get(f"/runs/{run_id}", params={"key": key}).status_code == 200
        assert anonymous.get(f"/v1/runs/{run_id}", params={"key": key}).json()["accepted"]
        wrong_key = key[:-1] + ("B" if key.endswith("A") else "A")
        wrong = anonymous.get(f"/v1/runs/{run_id}", params={"key": wrong_key})
        assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "invalid_key"
        assert anonymous.get(f"/runs/{run_id}").status_code == 401
        other = anonymous.get("/v1/runs/0123456789abcdef", params={"key": key})
        assert other.status_code == 401
        listing = anonymous.get("/v1/runs", params={"key": key})
        assert listing.status_code == 401
        post = anonymous.post("/v1/correct", params={"key": key}, json=correct_body(figure3))
        assert post.status_code == 401


def _sqlite_file(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE secrets (v TEXT)")
    conn.commit()
    conn.close()
    return path


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"database": "sqlite:///{path}"}, "invalid_request"),
        ({"database": "{path}"}, "invalid_request"),
        ({"database": "../demo"}, "invalid_request"),
        ({"database": "file:demo"}, "invalid_request"),
        ({"database": "other"}, "unknown_database"),
        ({"database": {"url": "sqlite:///{path}"}}, "invalid_request"),
        ({"url": "sqlite:///{path}"}, "unknown_field"),
        ({"db": "{path}"}, "unknown_field"),
        ({"database_url": "postgresql://u:p@127.0.0.1/db"}, "unknown_field"),
        ({"llm": "scripted:{path}"}, "unknown_field"),
        ({"backend": "openai:gpt-4o"}, "unknown_field"),
        ({"base_url": "http://127.0.0.1:9/v1"}, "unknown_field"),
        ({"dialect": "sqlite:///{path}"}, "invalid_request"),
        ({"dialect": "postgresql"}, "dialect_mismatch"),
        ({"method": "acts"}, "unknown_field"),
        ({"options": {"method": "scripted:{path}"}}, "invalid_request"),
        ({"options": {"budget": {"url": "sqlite:///{path}"}}}, "unknown_field"),
        ({"options": {"schema_chars": 100000}}, "unknown_field"),
        ({"options": {"url": "sqlite:///{path}"}}, "unknown_field"),
    ],
)
def test_a_url_path_or_backend_smuggled_into_a_request_is_rejected(
    service: Service, figure3, tmp_path: Path, change, code
):
    path = _sqlite_file(tmp_path / "smuggled.db")
    body = correct_body(figure3)
    for key, value in change.items():
        body[key] = json.loads(json.dumps(value).replace("{path}", str(path)))
    with service.client() as client:
        reply = client.post("/v1/correct", json=body)
        generate = client.post("/v1/generate", json={**body, "sql": None} | {"question": "q"})
    assert reply.json()["error"]["code"] == code, reply.text
    assert reply.status_code in (400, 422)
    assert generate.status_code in (400, 422)
    assert service.registry.recent(10) == []  # nothing ran


def test_budgets_above_the_server_maxima_are_refused(tmp_path: Path, figure3):
    limits = {"max_llm_calls": 10, "max_run_seconds": 30}
    with running_service(service_config(tmp_path, limits=limits)) as svc, svc.client() as c:
        calls = c.post("/v1/correct", json=with_budget(figure3, max_llm_calls=11))
        seconds = c.post("/v1/correct", json=with_budget(figure3, max_seconds=31))
        negative = c.post("/v1/correct", json=with_budget(figure3, max_nodes=0))
        within = c.post("/v1/correct", json=with_budget(figure3, max_llm_calls=10))
    assert calls.status_code == 400 and calls.json()["error"]["code"] == "budget_over_limit"
    assert "max_llm_calls" in calls.json()["error"]["message"]
    assert seconds.json()["error"]["code"] == "budget_over_limit"
    assert negative.status_code == 422 and negative.json()["error"]["code"] == "invalid_request"
    assert within.status_code == 200
    options = within.json()["trace"][0]["data"]["options"]["budget"]
    assert options["max_llm_calls"] == 10 and options["max_seconds"] == 30


def test_malformed_bodies_get_json_errors(service: Service):
    with service.client() as client:
        not_json = client.post(
            "/v1/correct", content=b"{not json", headers={"Content-Type": "application/json"}
        )
        missing = client.post("/v1/correct", json={"database": "demo"})
        wrong_type = client.post("/v1/correct", json=["database", "demo"])
        get_only = client.delete("/v1/runs")
    assert not_json.status_code == 422 and not_json.json()["error"]["code"] == "invalid_json"
    assert missing.status_code == 422 and missing.json()["error"]["code"] == "invalid_request"
    assert "sql" in missing.json()["error"]["message"]
    assert wrong_type.status_code == 422
    assert get_only.status_code == 405
    assert get_only.json()["error"]["code"] == "method_not_allowed"


def test_an_oversized_body_is_refused_with_413(tmp_path: Path, figure3):
    limits = {"max_body_bytes": 4096}
    with running_service(service_config(tmp_path, limits=limits)) as svc, svc.client() as c:
        big = correct_body(figure3, question="x" * 5000)
        declared = c.post("/v1/correct", json=big)

        def chunks():  # no Content-Length: the limit applies while reading
            for _ in range(10):
                yield b" " * 1000

        streamed = c.post(
            "/v1/correct", content=chunks(), headers={"Content-Type": "application/json"}
        )
        fits = c.post("/v1/correct", json=correct_body(figure3))
    for reply in (declared, streamed):
        assert reply.status_code == 413, reply.text
        assert reply.json()["error"]["code"] == "body_too_large"
    assert fits.status_code == 200
    assert len(svc.registry.recent(10)) == 1


def test_a_burst_beyond_the_concurrency_limit_gets_429(tmp_path: Path, figure3):
    config = service_config(tmp_path, delay_s=0.1, limits={"max_concurrent_runs": 2})
    with running_service(config) as svc:
        replies: list[httpx.Response] = []
        lock = threading.Lock()
        go = threading.Barrier(6)

        def client_run() -> None:
            with svc.client() as client:
                go.wait()
                reply = client.post("/v1/correct", json=correct_body(figure3))
            with lock:
                replies.append(reply)

        threads = [threading.Thread(target=client_run) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        codes = sorted(r.status_code for r in replies)
        assert codes == [200, 200, 429, 429, 429, 429], [r.text[:200] for r in replies]
        for reply in replies:
            if reply.status_code == 429:
                assert reply.json()["error"]["code"] == "too_many_runs"
                assert reply.headers["retry-after"] == "1"
            else:
                assert reply.json()["accepted"] is True
        # the slots are free again once the runs are over
        with svc.client() as client:
            assert client.post("/v1/correct", json=correct_body(figure3)).status_code == 200
            assert client.get("/healthz").json()["active_runs"] == 0


def test_a_run_past_its_time_budget_is_reported_as_timed_out(tmp_path: Path, figure3):
    # the engine keeps a second of the run's time for returning its answer and starts no LLM
    # call without time left, so the run overruns only through a call that ignores its deadline:
    # the scripted backend sleeps its delay whatever the call's timeout says. 2 s leave the
    # engine 1 s to reach its first call even on busy cores (the rule chain runs before it)
    config = service_config(tmp_path, delay_s=3.0, limits={"grace_seconds": 0.2})
    with running_service(config) as svc, svc.client() as client:
        reply = client.post("/v1/correct", json=with_budget(figure3, max_seconds=2.0))
        assert reply.status_code == 504, reply.text
        assert reply.json()["error"]["code"] == "run_timeout"
        run_id = reply.headers["x-run-id"]
        status = client.get(f"/v1/runs/{run_id}").json()
    assert status["status"] == "timed_out"
    assert status["error"]["code"] == "run_timeout"


def test_a_database_that_fails_at_run_time_is_a_json_error(tmp_path: Path, figure3):
    copy = tmp_path / "gone.db"
    copy.write_bytes(demo_db_path().read_bytes())
    config = service_config(tmp_path, databases={"demo": {"url": f"sqlite:///{copy}"}})
    with running_service(config) as svc, svc.client() as client:
        copy.unlink()
        reply = client.post("/v1/correct", json=correct_body(figure3))
    assert reply.status_code == 503
    assert reply.json()["error"]["code"] == "database_unavailable"


@pytest.mark.parametrize(("writes", "status"), [("none", "blocked"), ("copy", "ok")])
def test_writes_follow_the_database_configuration(tmp_path: Path, figure3, writes, status):
    database = tmp_path / "shop.db"
    database.write_bytes(demo_db_path().read_bytes())
    before = database.read_bytes()
    config = service_config(
        tmp_path, databases={"shop": {"url": f"sqlite:///{database}", "writes": writes}}
    )
    body = {
        "database": "shop",
        "question": figure3.question,
        "sql": "DELETE FROM bookings WHERE booking_id = 1",
        "options": {"budget": {"max_llm_calls": 1}},
    }
    with running_service(config) as svc, svc.client() as client:
        reply = client.post("/v1/correct", json=body)
    assert reply.status_code == 200, reply.text
    original = next(
        e for e in reply.json()["trace"] if e["kind"] == "statement" and e["purpose"] == "original"
    )
    assert original["data"]["status"] == status
    assert database.read_bytes() == before  # the configured file is never changed


def test_a_request_sets_the_method_and_the_candidate_pool(tmp_path: Path, figure3):
    right = f"```sql\n{figure3.right_sql}\n```"
    script = {"correct": [right, right.replace("SELECT", "select")]}
    with running_service(service_config(tmp_path, script=script)) as svc, svc.client() as client:
        reply = client.post(
            "/v1/correct",
            json=correct_body(
                figure3, options={"method": "vote", "candidates": 2, "temperature": 0.5}
            ),
        )
        too_many = client.post(
            "/v1/correct", json=correct_body(figure3, options={"candidates": 99})
        )
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["method"] == "vote" and body["accepted"] is True
    assert body["usage"]["llm_calls"] == 2
    (only,) = body["candidates"]  # the two replies are one SQL: one candidate, two votes
    assert only["votes"] == 2
    assert too_many.status_code == 422


def test_the_staged_methods_run_in_the_service(tmp_path: Path, figure3):
    """`maplerepair` repairs a misspelt column with its rules alone; `dac` makes its calls."""
    script = {
        "link_entities": [{"links": []}],
        "sketch": [f"```sql\n{figure3.sql}\n```"],
        "correct": [f"```sql\n{figure3.right_sql}\n```"],
    }
    misspelt = figure3.sql.replace("r.name", "r.nmae")
    with running_service(service_config(tmp_path, script=script)) as svc, svc.client() as client:
        maple = client.post(
            "/v1/correct",
            json={**correct_body(figure3), "sql": misspelt, "options": {"method": "maplerepair"}},
        )
        dac = client.post("/v1/correct", json=correct_body(figure3, options={"method": "dac"}))
    assert maple.status_code == 200, maple.text
    body = maple.json()
    assert body["method"] == "maplerepair" and body["usage"]["llm_calls"] == 0
    assert "r.nmae" not in body["sql"] and body["accepted"] is True
    assert any(e["kind"] == "rule_fired" for e in body["trace"])
    assert dac.status_code == 200, dac.text
    assert dac.json()["method"] == "dac"
    assert [e["purpose"] for e in dac.json()["trace"] if e["kind"] == "llm_call"] == [
        "link_entities",
        "sketch",
    ]


def test_a_prql_query_is_corrected_through_the_service_and_bad_languages_are_refused(
    tmp_path: Path,
):
    from support import duckdb_table

    url = duckdb_table(
        tmp_path / "logs.duckdb",
        "CREATE TABLE requests (id INTEGER, service VARCHAR, status INTEGER)",
        [(1, "checkout", 503), (2, "checkout", 200), (3, "search", 500)],
    )
    typo = "from requests\nfiltr status >= 500\naggregate {n = count this}"
    right = "from requests\nfilter status >= 500\naggregate {n = count this}"
    script = {"correct": [f"```prql\n{right}\n```"]}
    databases = {"logs": {"url": url}, "demo": {"url": f"sqlite:///{demo_db_path()}"}}
    config = service_config(tmp_path, script=script, databases=databases)
    base = {"database": "logs", "question": "How many server errors?", "sql": typo}
    with running_service(config) as svc, svc.client() as client:
        fixed = client.post(
            "/v1/correct", json={**base, "language": "prql", "options": {"method": "maplerepair"}}
        )
        unknown = client.post("/v1/correct", json={**base, "language": "kql"})
    assert fixed.status_code == 200, fixed.text
    body = fixed.json()
    assert body["sql"] == right and body["dialect"] == "prql"
    assert body["result"]["rows"] == [[2]]
    assert unknown.status_code == 400 and unknown.json()["error"]["code"] == "bad_input"
    assert "unknown query language 'kql'" in unknown.json()["error"]["message"]
    with pytest.raises(ApiError, match="PRQL does not run on this database \\(mysql\\)"):
        check_language("prql", "mysql")  # a database the plugin does not target


def test_blank_and_oversized_sql_or_questions_are_refused_with_422(tmp_path: Path, figure3):
    limits = {"max_body_bytes": 2 * MAX_SQL_CHARS}
    with running_service(service_config(tmp_path, limits=limits)) as svc, svc.client() as c:
        blank = c.post("/v1/correct", json=correct_body(figure3, sql="  \n\t"))
        huge = c.post("/v1/correct", json=correct_body(figure3, sql="x" * (MAX_SQL_CHARS + 1)))
        long_question = correct_body(figure3, question="q" * (MAX_QUESTION_CHARS + 1))
        question = c.post("/v1/correct", json=long_question)
        generate = c.post("/v1/generate", json={"database": "demo", "question": "   "})
        at_limit = c.post("/v1/correct", json=correct_body(figure3, question="q" * 1000))
    for reply, field in (
        (blank, "sql"),
        (huge, "sql"),
        (question, "question"),
        (generate, "question"),
    ):
        assert reply.status_code == 422, reply.text
        error = reply.json()["error"]
        assert error["code"] == "invalid_request" and error["message"].startswith(f"{field}:")
    assert f"{MAX_SQL_CHARS}" in huge.json()["error"]["message"]
    assert at_limit.status_code == 200
    assert len(svc.registry.recent(10)) == 1  # only the valid request made a run
