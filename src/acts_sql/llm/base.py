"""The LLM protocol: messages in, text out, with usage per call."""

from __future__ import annotations

from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field


class Message(BaseModel):
    role: Literal["system", "user", "assistant"]
    content: str


class AvoidValues(BaseModel):
    """Values a JSON reply's string `field` should not take: SQL the run already dropped.

    Compared whitespace, case and a trailing ``;`` aside. A backend that can steer its
    decoding away from them does (the local one: `acts_sql.llm.local.steering`); the
    others ignore it, so the caller still checks what comes back.
    """

    field: str = "sql"
    values: list[str] = Field(default_factory=list)


class SqlNames(BaseModel):
    """The names SQL in the reply may use: the schema's tables and columns.

    A backend that can constrain its decoding to them does (the local one:
    `acts_sql.llm.local.constraint`; aliases the SQL defines are allowed too); the
    others ignore it. The SQL is in ```sql blocks of a text reply, or in the string
    fields `json_fields` of a JSON reply (a request with a ``json_schema``).
    """

    names: list[str] = Field(default_factory=list)
    json_fields: list[str] = Field(default_factory=lambda: ["sql"])


class LLMRequest(BaseModel):
    """One call. `purpose` says why (plan, judge, ...); every request has one."""

    purpose: str
    messages: list[Message] = Field(min_length=1)
    json_schema: dict[str, Any] | None = None
    temperature: float = 0.0
    seed: int | None = None
    """Sampling seed, so that the samples of one pool differ from each other (and a
    sample is reproducible); None: the backend's own."""
    max_tokens: int = 1024
    avoid: AvoidValues | None = None
    sql_names: SqlNames | None = None
    enough_blocks: int | None = None
    """A text reply is complete once it has closed this many non-empty ```sql blocks:
    what a model writes after them is prose the caller throws away. A backend that can
    stop there does (the local and the scripted one, `acts_sql.llm.sql_fences`); the
    others ignore it. None: the reply ends where the model ends it."""
    timeout_s: float | None = None
    """Seconds this call may take at most; None: no limit. The engine sets it to
    what is left of the run's wall time. Not part of what the request asks for:
    the record/replay cache ignores it."""


class Usage(BaseModel):
    """What one call cost."""

    purpose: str
    prompt_tokens: int = 0
    cached_prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    replayed: bool = False
    """True when the reply came from a record/replay cache, not the model."""
    stopped_by: str | None = None
    """Why generation ended, when the backend says: ``stop``, ``length``,
    ``repetition``, ``deadline`` (``timeout_s`` passed: the text is partial), ``blocks``
    (the request's ``enough_blocks`` closed)."""
    decoder: str | None = None
    """What wrote the reply, when the backend says (the local backend: ``lookup``,
    ``sampler`` or ``llama-cpp-python``), so that rates can be read per decoder."""
    steered: int = 0
    """Times the backend turned the reply away from a value of the request's ``avoid``
    (its tokens up to there count in ``completion_tokens``)."""
    constrained: bool = False
    """True when the backend held the reply's SQL to the request's ``sql_names``."""
    refused_tokens: int = 0
    """Tokens the name constraint refused (each replaced by the best allowed one)."""


class LLMResponse(BaseModel):
    text: str
    usage: Usage


@runtime_checkable
class LLMBackend(Protocol):
    """Anything that answers an LLMRequest. Raises LLMError when it cannot."""

    name: str

    def complete(self, request: LLMRequest) -> LLMResponse: ...


@runtime_checkable
class OrderedReplies(Protocol):
    """A backend whose reply depends on the order of the calls, not on the request alone
    (the scripted backend serves each purpose's replies in order).

    A request sent ahead (`acts_sql.engine.prefetch`) only waits out its latency
    (`simulate_latency`); its reply is taken (`reply`, no waiting) when the search uses
    it, in the search's own order, so concurrency never changes which reply a call gets.
    """

    def simulate_latency(self, request: LLMRequest) -> None: ...

    def reply(self, request: LLMRequest, *, seconds: float) -> LLMResponse: ...


@runtime_checkable
class SendsAhead(Protocol):
    """An LLM handle that can send requests before they are asked for (`--parallel`):
    a later call with the same request takes the reply that came back meanwhile."""

    def send_ahead(self, requests: list[LLMRequest]) -> None: ...
