"""A tiny headless-Chromium driver over the DevTools protocol, without dependencies.

Chromium is started with ``--remote-debugging-pipe``: it reads protocol
messages (JSON, NUL-terminated) on file descriptor 3 and writes replies on 4,
so no websocket client library is needed. Enough of the protocol for the
viewer tests: open a page, evaluate JavaScript, click at a point with real
mouse events, take a screenshot.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--no-first-run",
    "--no-default-browser-check",
    "--hide-scrollbars",
    "--mute-audio",
)


def chromium_path() -> str | None:
    found = shutil.which("chromium") or (CHROMIUM if Path(CHROMIUM).exists() else None)
    return found


class CDPError(RuntimeError):
    """A protocol error reply, a crash of the browser or a time-out."""


class Browser:
    """One headless Chromium with one page (a target attached in flat mode)."""

    def __init__(self, *, width: int = 1500, height: int = 1000, timeout: float = 30.0) -> None:
        binary = chromium_path()
        if binary is None:
            raise CDPError("chromium is not installed")
        self.timeout = timeout
        self._profile = tempfile.mkdtemp(prefix="acts-sql-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # move the child's ends above 9 so the shell can place them on 3 and 4
        child_r = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 20)
        child_w = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 20)
        os.close(to_browser_r)
        os.close(from_browser_w)
        args = [
            binary,
            *FLAGS,
            f"--user-data-dir={self._profile}",
            f"--window-size={width},{height}",
            "--remote-debugging-pipe",
            "about:blank",
        ]
        script = f'exec "$0" "$@" 3<&{child_r} 4>&{child_w} {child_r}<&- {child_w}>&-'
        self._proc = subprocess.Popen(
            ["/bin/bash", "-c", script, *args],
            pass_fds=(child_r, child_w),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(child_r)
        os.close(child_w)
        self._buffer = b""
        self._next_id = 0
        self.console: list[str] = []
        self.exceptions: list[str] = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        self.page("Page.enable")
        self.page("Runtime.enable")
        self.page(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )

    # -- protocol --------------------------------------------------------------

    def call(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise CDPError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._note(reply)

    def page(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.call(method, params, self.session)

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CDPError("no reply from chromium in time")
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise CDPError(f"chromium exited (code {self._proc.poll()})")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def _note(self, event: dict[str, Any]) -> None:
        method = event.get("method")
        params = event.get("params", {})
        if method == "Runtime.consoleAPICalled":
            self.console.append(" ".join(str(a.get("value", "")) for a in params.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            self.exceptions.append(
                str(details.get("exception", {}).get("description") or details.get("text"))
            )

    # -- page helpers ----------------------------------------------------------

    def open(self, url: str) -> None:
        """Navigate and wait until the new document has loaded."""
        reply = self.page("Page.navigate", {"url": url})
        if reply.get("errorText"):
            raise CDPError(f"cannot open {url}: {reply['errorText']}")
        self.wait_for(f"location.href === {json.dumps(url)} && document.readyState === 'complete'")

    def evaluate(self, expression: str) -> Any:
        reply = self.page(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in reply:
            raise CDPError(f"script error: {reply['exceptionDetails']}")
        return reply.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout: float = 15.0) -> Any:
        """Poll `expression` until it is truthy; its value."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = self.evaluate(expression)
            except CDPError:
                value = None
            if value:
                return value
            if time.monotonic() > deadline:
                raise CDPError(f"timed out waiting for: {expression}")
            time.sleep(0.05)

    def click(self, selector: str) -> None:
        """A real mouse click (press and release) at the centre of the element."""
        box = self.evaluate(
            "(() => { const el = document.querySelector(" + json.dumps(selector) + ");"
            " if (!el) return null; el.scrollIntoView({block: 'center', inline: 'center'});"
            " const r = el.getBoundingClientRect();"
            " return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()"
        )
        if not box:
            raise CDPError(f"no element matches {selector}")
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.page(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": box["x"], "y": box["y"], "button": "left", "clickCount": 1},
            )

    def screenshot(self, path: Path) -> Path:
        data = self.page("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data["data"]))
        return path

    def close(self) -> None:
        with contextlib.suppress(CDPError, OSError):
            self.call("Browser.close")
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(timeout=5)
        for fd in (self._to_browser, self._from_browser):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
