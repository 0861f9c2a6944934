"""The LLM protocol: messages in, text out, with usage per call."""

from __future__ import annotations

from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field


class Message(BaseModel):
    role: Literal["system", "user", "assistant"]
    content: str


class LLMRequest(BaseModel):
    """One call. `purpose` says why (plan, judge, ...); every request has one."""

    purpose: str
    messages: list[Message] = Field(min_length=1)
    json_schema: dict[str, Any] | None = None
    temperature: float = 0.0
    max_tokens: int = 1024


class Usage(BaseModel):
    """What one call cost."""

    purpose: str
    prompt_tokens: int = 0
    cached_prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    replayed: bool = False
    """True when the reply came from a record/replay cache, not the model."""


class LLMResponse(BaseModel):
    text: str
    usage: Usage


@runtime_checkable
class LLMBackend(Protocol):
    """Anything that answers an LLMRequest. Raises LLMError when it cannot."""

    name: str

    def complete(self, request: LLMRequest) -> LLMResponse: ...
