"""An LLM endpoint that cannot be reached: `503 llm_unavailable`, as docs/SERVICE.md says."""

from __future__ import annotations

import socket
from pathlib import Path

from acts_sql.demo import DemoTask, demo_db_path
from server.service import TOKEN, running_service, toml_value


def closed_port_url() -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def unreachable_config(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "service.toml"
    path.write_text(
        "\n".join(
            [
                "[llm]",
                'spec = "openai:m"',
                f"base_url = {toml_value(url)}",
                "max_retries = 0",
                "",
                "[auth]",
                f"tokens = {toml_value([TOKEN])}",
                "",
                "[databases.demo]",
                f"url = {toml_value(f'sqlite:///{demo_db_path()}')}",
                "",
            ]
        )
    )
    return path


def test_an_unreachable_llm_is_503_llm_unavailable(tmp_path: Path, figure3: DemoTask, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    url = closed_port_url()
    with running_service(unreachable_config(tmp_path, url)) as svc, svc.client() as client:
        body = {"database": "demo", "question": figure3.question, "sql": figure3.sql}
        reply = client.post("/v1/correct", json=body)
        generated = client.post("/v1/generate", json={"database": "demo", "question": "q"})
        assert reply.status_code == 503, reply.text
        error = reply.json()["error"]
        assert error["code"] == "llm_unavailable"
        assert url in error["message"] and "cannot connect" in error["message"]
        assert generated.status_code == 503
        assert generated.json()["error"]["code"] == "llm_unavailable"
        status = client.get(f"/v1/runs/{reply.headers['x-run-id']}").json()
    assert status["status"] == "failed"
    assert status["error"]["code"] == "llm_unavailable"
