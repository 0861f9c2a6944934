"""`acts-sql serve` in a process of its own, for tests that kill it (``kill -9``)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from server.service import TOKEN
from support import sigint_as_default

ACTS_SQL = str(Path(sys.executable).parent / "acts-sql")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServiceProcess:
    """`acts-sql serve --config CONFIG` on a free loopback port; its output goes to a log."""

    def __init__(self, config: Path) -> None:
        self.config = config
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log_path = config.with_name(f"serve-{self.port}.log")
        self._proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> ServiceProcess:
        with open(self.log_path, "wb") as log:
            self._proc = subprocess.Popen(
                [ACTS_SQL, "serve", "--config", str(self.config), "--port", str(self.port)],
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, "ACTS_SQL_TOKENS": ""},
                preexec_fn=sigint_as_default,
            )
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(self.base_url + "/healthz", timeout=1).raise_for_status()
                return self
            except httpx.HTTPError:
                if self._proc.poll() is not None or time.monotonic() > deadline:
                    self.kill()
                    raise AssertionError("acts-sql serve did not start:\n" + self.log()) from None
                time.sleep(0.05)

    def __exit__(self, *exc: object) -> None:
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()

    def kill(self) -> None:
        """``kill -9``: the process gets no chance to write or close anything."""
        if self._proc is not None and self._proc.poll() is None:
            os.kill(self._proc.pid, signal.SIGKILL)
            self._proc.wait(timeout=10)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def client(self, token: str | None = TOKEN, **kwargs: Any) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        kwargs.setdefault("timeout", 30.0)
        return httpx.Client(base_url=self.base_url, headers=headers, **kwargs)
