"""A stub OpenAI-compatible server on loopback, and helpers for the LLM tests.

The stub is a real HTTP server (``http.server`` in a thread, real sockets) on
a free 127.0.0.1 port, serving ``POST /v1/chat/completions``. Tests queue the
replies it gives (status, body, headers, delay) or install a handler that
decides from the request; every request body it received is recorded.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from acts_sql.llm.base import LLMRequest, LLMResponse


@dataclass
class StubReply:
    """What the stub answers to one request."""

    status: int = 200
    body: Any = None  # dict/list -> JSON, str/bytes -> sent as is
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


def completion(
    text: str,
    *,
    prompt_tokens: int = 11,
    completion_tokens: int = 7,
    cached_tokens: int | None = None,
) -> StubReply:
    """A well-formed chat completion whose message content is `text`."""
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if cached_tokens is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached_tokens}
    return StubReply(
        body={
            "id": "chatcmpl-stub",
            "object": "chat.completion",
            "created": 0,
            "model": "stub-model",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": usage,
        }
    )


def api_error(status: int, message: str, **headers: str) -> StubReply:
    """An error reply shaped like OpenAI's."""
    return StubReply(
        status=status,
        body={"error": {"message": message, "type": "invalid_request_error", "code": None}},
        headers=headers,
    )


class ChatStub:
    """The server's state: queued replies, an optional handler, and requests seen."""

    def __init__(self, stop: threading.Event) -> None:
        self.url = ""
        self.requests: list[dict[str, Any]] = []
        self.auth: list[str | None] = []
        self.queue: list[StubReply] = []
        self.handler: Callable[[dict[str, Any]], StubReply] | None = None
        self.stop = stop
        self._lock = threading.Lock()

    def reply(self, *replies: StubReply) -> None:
        """Queue replies, given in order to the next requests."""
        self.queue.extend(replies)

    def next_reply(self, body: dict[str, Any], auth: str | None) -> StubReply:
        with self._lock:
            self.requests.append(body)
            self.auth.append(auth)
            if self.queue:
                return self.queue.pop(0)
        if self.handler is not None:
            return self.handler(body)
        return completion("default reply")

    @property
    def formats(self) -> list[str | None]:
        """The response_format type of each request seen (None: not sent)."""
        return [(body.get("response_format") or {}).get("type") for body in self.requests]


def _handler_class(stub: ChatStub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length)
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send(StubReply(status=404, body={"error": {"message": "no such route"}}))
                return
            reply = stub.next_reply(json.loads(raw), self.headers.get("authorization"))
            if reply.delay_s and stub.stop.wait(reply.delay_s):
                return  # the test is over: drop the connection
            self._send(reply)

        def _send(self, reply: StubReply) -> None:
            body = reply.body
            if isinstance(body, dict | list):
                data = json.dumps(body).encode()
            elif isinstance(body, str):
                data = body.encode()
            else:
                data = body or b""
            try:
                self.send_response(reply.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout); nothing to answer

    return Handler


def serve(stub: ChatStub) -> Iterator[ChatStub]:
    """Run the stub on a free loopback port until the generator is closed."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_class(stub))
    stub.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield stub
    finally:
        stub.stop.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


class RecordingBackend:
    """Wraps a backend and records every request it was given."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = f"recording:{inner.name}"
        self.requests: list[LLMRequest] = []

    def complete(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        result: LLMResponse = self.inner.complete(request)
        return result
