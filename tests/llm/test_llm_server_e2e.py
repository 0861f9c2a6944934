"""`acts-sql fix` through llama-cpp-python's own OpenAI-compatible server (slow, real model).

Starts the server (``python -m acts_sql.llm.local.openai_server``: ``llama_cpp.server``
with the model loaded as acts-sql loads it) on the embedded model on a free port, then
runs ``fix --method raw`` and ``fix --method acts`` against a tiny SQLite database through
it, as a user would with ``--llm openai:q05 --base-url ...``. The server answers
``response_format: json_schema`` with HTTP 500: the backend must fall back to
``json_object`` and every call must be answered. Run by hand, one model at a time:

    flock /tmp/acts-model.lock env PYTHONPATH=src python -m pytest \
        tests/llm/test_llm_server_e2e.py -m slow -q
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from acts_sql.llm.models import default_cache_dir, get_model

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

SERVER_MODULES = (
    "llama_cpp",
    "uvicorn",
    "fastapi",
    "pydantic_settings",
    "sse_starlette",
    "starlette_context",
)
MODELS = ("qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b")  # the first one present is used
SRC = Path(__file__).resolve().parents[2] / "src"


def model_file() -> Path | None:
    for name in MODELS:
        path = default_cache_dir() / "models" / get_model(name).file_name
        if path.is_file():
            return path
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def env() -> dict[str, str]:
    return os.environ | {
        "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))
    }


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    missing = [name for name in SERVER_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        pytest.skip(f"needs pip install 'acts-sql[local-server]' (missing: {', '.join(missing)})")
    model = model_file()
    if model is None:
        pytest.skip(
            f"no embedded model in {default_cache_dir() / 'models'} (run it once: fix --llm local:)"
        )
    port, log = free_port(), tmp_path_factory.mktemp("server") / "server.log"
    command = [sys.executable, "-m", "acts_sql.llm.local.openai_server", "--model", str(model)]
    command += ["--port", str(port), "--model_alias", "q05", "--n_ctx", "4096", "--n_threads", "2"]
    with log.open("w") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env())
    url = f"http://127.0.0.1:{port}/v1"
    try:
        wait_until_up(url, process, log)
        yield url, log
    finally:
        process.terminate()
        process.wait(timeout=30)


def wait_until_up(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the server exited ({process.returncode}): {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    pytest.fail(f"the server did not answer within 180 s: {log.read_text()[-2000:]}")


@pytest.fixture(scope="module")
def tiny_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("db") / "tiny.sqlite"
    with sqlite3.connect(path) as connection:
        connection.executescript(
            "CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INTEGER);"
            "INSERT INTO users VALUES (1,'Ada',36),(2,'Bob',25),(3,'Cy',41),(4,'Di',19);"
        )
    return f"sqlite:///{path}"


@pytest.mark.parametrize("method", ["raw", "acts"])
def test_fix_through_llama_cpp_python_server(
    server: tuple[str, Path], tiny_db: str, tmp_path: Path, method: str
) -> None:
    url, log = server
    trace = tmp_path / "trace.json"
    command = [sys.executable, "-m", "acts_sql", "fix", "--db", tiny_db, "--method", method]
    command += ["--question", "names of the users older than 30"]
    command += ["--sql", "SELECT name FROM user WHERE age > 30", "--max-llm-calls", "4"]
    command += ["--llm", "openai:q05", "--base-url", url, "--api-key", "none"]
    command += ["--json", "--trace", str(trace)]
    done = subprocess.run(command, capture_output=True, text=True, env=env(), timeout=600)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    result = json.loads(done.stdout)
    events = json.loads(trace.read_text())
    events = events if isinstance(events, list) else events["events"]
    calls = [e["data"] for e in events if e["kind"] == "llm_call"]
    assert calls and result["usage"]["llm_calls"] == len(calls)
    assert all(call["completion_tokens"] > 0 and call["seconds"] > 0 for call in calls)
    assert not [e for e in events if e["kind"] == "llm_failed"], result["reason"]
    assert "LLM backend failed" not in result["reason"]
    refusals = log.read_text().count('"POST /v1/chat/completions HTTP/1.1" 500')
    assert refusals <= 1 if method == "raw" else refusals <= 3  # json_schema, once per run
