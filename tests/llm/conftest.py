"""Fixtures for the LLM tests: a stub chat-completions server, a closed port."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest
from llm_stub import ChatStub, serve


@pytest.fixture
def chat_stub() -> Iterator[ChatStub]:
    """A stub OpenAI-compatible server on a free 127.0.0.1 port."""
    yield from serve(ChatStub(threading.Event()))


@pytest.fixture
def closed_port_url() -> str:
    """A loopback URL where nothing listens (connections are refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
