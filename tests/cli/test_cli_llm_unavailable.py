"""`acts-sql fix` with an LLM endpoint that cannot be reached: a configuration error."""

from __future__ import annotations

import socket

from typer.testing import CliRunner

from acts_sql.cli.app import app

runner = CliRunner()


def closed_port_url() -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_an_unreachable_endpoint_is_exit_2_with_one_line(demo_db):
    url = closed_port_url()
    for extra in ([], ["--json"]):
        args = ["fix", "--db", demo_db, "--sql", "SELECT 1", "--question", "q"]
        result = runner.invoke(app, [*args, "--llm", "openai:x", "--base-url", url, *extra])
        assert result.exit_code == 2, result.output
        err = result.stderr.strip()
        assert err.startswith(f"error: LLM endpoint {url} (model x): cannot connect")
        assert len(err.splitlines()) == 1
        assert result.stdout == ""  # no "best candidate", no progress line repeating the error
