"""The service on a free loopback port, for tests: real HTTP, real uvicorn.

`service_config(tmp_path, ...)` writes a TOML configuration (scripted LLM,
the demo SQLite database); `Service(app)` serves an app from a background
thread and gives httpx clients for it.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from acts_sql.demo import demo_db_path
from acts_sql.server import create_app, load_config
from support import demo_script

TOKEN = "test-token-0123456789abcdef"
OTHER_TOKEN = "second-token-abcdef0123456789"


def toml_value(value: Any) -> str:
    """Strings, numbers, booleans and lists of them: their JSON is valid TOML."""
    return json.dumps(value)


def service_config(
    tmp_path: Path,
    *,
    script: dict[str, list[Any]] | None = None,
    delay_s: float | None = None,
    limits: dict[str, Any] | None = None,
    databases: dict[str, dict[str, Any]] | None = None,
    tokens: list[str] | None = None,
    store: dict[str, Any] | None = None,
) -> Path:
    """A configuration file; the scripted LLM replays `script` (default: Figure 3).

    Runs are stored in service.runs.sqlite next to it unless `store` says otherwise.
    """
    replies = script if script is not None else demo_script("figure3")
    encoded = {
        k: [r if isinstance(r, str) else json.dumps(r) for r in v] for k, v in replies.items()
    }
    script_path = tmp_path / "script.json"
    script_path.write_text(json.dumps(encoded))
    lines = ["[llm]", f"spec = {toml_value('scripted:' + str(script_path))}"]
    if delay_s is not None:
        lines.append(f"delay_s = {delay_s}")
    lines += ["", "[auth]", f"tokens = {toml_value(tokens or [TOKEN, OTHER_TOKEN])}", ""]
    lines.append("[limits]")
    for key, value in (limits or {}).items():
        lines.append(f"{key} = {toml_value(value)}")
    dbs = databases or {"demo": {"url": f"sqlite:///{demo_db_path()}"}}
    for name, table in dbs.items():
        lines += ["", f"[databases.{name}]"]
        lines += [f"{key} = {toml_value(value)}" for key, value in table.items()]
    if store:
        lines += ["", "[store]"]
        lines += [f"{key} = {toml_value(value)}" for key, value in store.items()]
    path = tmp_path / "service.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


class Service:
    """An app served by uvicorn on 127.0.0.1 in a background thread."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            app, log_level="warning", lifespan="on", timeout_graceful_shutdown=1
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True
        )

    def __enter__(self) -> Service:
        self._thread.start()
        deadline = time.monotonic() + 15
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the service did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=15)
        self._sock.close()

    @property
    def registry(self) -> Any:
        return self.app.state.registry

    def client(self, token: str | None = TOKEN, **kwargs: Any) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        kwargs.setdefault("timeout", 30.0)
        return httpx.Client(base_url=self.base_url, headers=headers, **kwargs)


@contextmanager
def running_service(config_path: Path, **app_options: Any) -> Iterator[Service]:
    """The service for a configuration file (tokens from the file only)."""
    with Service(create_app(load_config(config_path, environ={}), **app_options)) as service:
        yield service


def sse_messages(lines: Iterator[str]) -> Iterator[dict[str, str]]:
    """Parse server-sent events: one dict (event, id, data) per message."""
    message: dict[str, str] = {}
    for line in lines:
        if line == "":
            if message:
                yield message
            message = {}
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "data" and field in message:
            value = message[field] + "\n" + value
        message[field] = value
    if message:
        yield message
