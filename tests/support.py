"""Test support: scripted backends that record their requests, demo scripts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acts_sql.llm.base import LLMRequest, LLMResponse
from acts_sql.llm.scripted import ScriptedBackend

DEMO_SCRIPTS = Path(__file__).resolve().parents[1] / "src" / "acts_sql" / "demo" / "scripts"


class RecordingBackend:
    """Wraps a backend and keeps every request, to assert on prompts."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = f"recording({inner.name})"
        self.requests: list[LLMRequest] = []

    def complete(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        return self.inner.complete(request)

    def prompts(self, purpose: str) -> list[str]:
        return [
            "\n".join(m.content for m in r.messages) for r in self.requests if r.purpose == purpose
        ]


def demo_script(task_id: str) -> dict[str, list[str]]:
    return json.loads((DEMO_SCRIPTS / f"{task_id}.json").read_text())


def scripted(script: dict[str, list[Any]]) -> RecordingBackend:
    """A recording scripted backend; dict/list responses are JSON-encoded."""
    encoded = {
        purpose: [r if isinstance(r, str) else json.dumps(r) for r in replies]
        for purpose, replies in script.items()
    }
    return RecordingBackend(ScriptedBackend(encoded))
