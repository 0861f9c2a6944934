"""The configuration file and `acts-sql serve`: a bad one stops the start with one line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from acts_sql.demo import demo_db_path
from acts_sql.errors import ConfigError
from acts_sql.server import load_config
from server.process import free_port
from server.service import TOKEN, service_config
from support import sigint_as_default

DEMO = f"sqlite:///{demo_db_path()}"
ACTS_SQL = str(Path(sys.executable).parent / "acts-sql")


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "service.toml"
    path.write_text(text)
    return path


GOOD = f"""
[llm]
spec = "openai:gpt-4o-mini"
base_url = "http://127.0.0.1:9/v1"

[auth]
tokens = ["{TOKEN}"]

[limits]
max_concurrent_runs = 3
max_body_bytes = 2048

[databases.shop]
url = "{DEMO}"
writes = "copy"

[databases.demo]
url = "{DEMO}"
dialect = "SQLite"
"""


def test_a_full_configuration_loads(tmp_path: Path):
    config = load_config(write(tmp_path, GOOD), environ={})
    assert config.llm.options() == {"base_url": "http://127.0.0.1:9/v1"}
    assert config.limits.max_concurrent_runs == 3 and config.limits.max_run_seconds == 300
    assert config.databases["shop"].writes == "copy"
    assert config.databases["demo"].dialect == "sqlite"
    assert config.auth.tokens == [TOKEN]


def test_tokens_also_come_from_the_environment(tmp_path: Path):
    text = GOOD.replace(f'tokens = ["{TOKEN}"]', "")
    env = {"ACTS_SQL_TOKENS": " env-token-0123456789abcdef , other-token-0123456789abcdef,"}
    config = load_config(write(tmp_path, text), environ=env)
    assert config.auth.tokens == ["env-token-0123456789abcdef", "other-token-0123456789abcdef"]
    with pytest.raises(ConfigError, match="no bearer token"):
        load_config(write(tmp_path, text), environ={})


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (('writes = "copy"', 'writes = "yes"'), "databases.shop.writes"),
        (("max_concurrent_runs = 3", "max_concurrent_runs = 0"), "limits.max_concurrent_runs"),
        (("max_body_bytes = 2048", 'max_body_bytes = "big"'), "limits.max_body_bytes"),
        (("[limits]", "[limits]\nmax_runs = 3"), "limits.max_runs: unknown key"),
        (("[auth]", "[auth]\nallow_anonymous = true"), "auth.allow_anonymous: unknown key"),
        ((f'tokens = ["{TOKEN}"]', 'tokens = ["short"]'), "at least 16 characters"),
        (('dialect = "SQLite"', 'dialect = "cobol"'), "databases.demo.dialect"),
        (("[databases.demo]", '[databases."bad/name"]'), "databases.bad/name"),
        (('spec = "openai:gpt-4o-mini"\n', ""), "llm.spec: missing"),
        (("[databases.shop]", '[databases.shop]\npath = "/etc/passwd"'), "unknown key"),
        (("[llm]", "[[llm]]"), "llm"),
        (("[auth]", "[auth"), "not valid TOML"),
    ],
)
def test_a_bad_configuration_names_the_problem(tmp_path: Path, edit, reason):
    old, new = edit
    assert old in GOOD
    with pytest.raises(ConfigError) as failed:
        load_config(write(tmp_path, GOOD.replace(old, new, 1)), environ={})
    message = str(failed.value)
    assert reason in message and "\n" not in message


def test_no_databases_is_a_configuration_error(tmp_path: Path):
    text = f'[llm]\nspec = "openai:x"\n[auth]\ntokens = ["{TOKEN}"]\n[databases]\n'
    with pytest.raises(ConfigError, match="at least one"):
        load_config(write(tmp_path, text), environ={})


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ACTS_SQL, *args], capture_output=True, text=True, timeout=60, env=env or os.environ.copy()
    )


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (GOOD.replace('writes = "copy"', 'writes = "always"'), "databases.shop.writes"),
        (GOOD.replace(DEMO, "sqlite:////nonexistent/db.sqlite", 1), "database 'shop'"),
        (GOOD.replace("openai:gpt-4o-mini", "scripted:/nonexistent.json"), "file not found"),
        (GOOD.replace("openai:gpt-4o-mini", "magic:model"), "unknown LLM spec"),
    ],
)
def test_serve_with_a_bad_configuration_exits_2_with_one_line(tmp_path: Path, text, reason):
    proc = run_cli("serve", "--config", str(write(tmp_path, text)), "--port", "0")
    assert proc.returncode == 2, proc.stderr
    assert reason in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_serve_starts_and_answers(tmp_path: Path):
    config = service_config(tmp_path)
    port = free_port()
    proc = subprocess.Popen(
        [ACTS_SQL, "serve", "--config", str(config), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=sigint_as_default,
    )
    try:
        deadline = time.monotonic() + 60  # a loaded 2-core machine starts slowly
        while True:
            try:
                reply = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise AssertionError("acts-sql serve did not start") from None
                time.sleep(0.1)
        assert reply.json()["status"] == "ok"
        unauthorized = httpx.get(f"http://127.0.0.1:{port}/v1/runs", timeout=5)
        assert unauthorized.status_code == 401
        guessed = httpx.get(f"http://127.0.0.1:{port}/runs/r1?key=SeCrEtViEwKeY", timeout=5)
        assert guessed.status_code in (401, 404)
    finally:
        proc.send_signal(signal.SIGINT)
        output, _ = proc.communicate(timeout=15)
    assert '"GET /runs/r1?key=[redacted] HTTP/1.1" 4' in output, output
    assert "SeCrEtViEwKeY" not in output
