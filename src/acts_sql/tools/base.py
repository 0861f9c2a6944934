"""What a tool receives and returns, and the protocol every tool follows."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from acts_sql.db.executor import Executor
from acts_sql.db.result import ExecResult
from acts_sql.llm.base import LLMBackend
from acts_sql.prompts.context import PathStep, TaskContext


class PoolSettings(BaseModel):
    """How many candidates a node writes, and how."""

    size: int = Field(1, ge=1, le=16)
    temperature: float = Field(0.8, ge=0.0, le=2.0)
    rules: bool = True
    """Add deterministic repairs of failing candidates."""
    stop_after_repeats: int = Field(2, ge=0)
    """Draw no more once this many draws of the pool repeated a SQL already rejected or
    failing (0: always draw `size`)."""


class PoolEntry(BaseModel):
    """One distinct candidate of a pool."""

    sql: str
    origin: str
    votes: int = 1
    result: ExecResult
    known: bool = False
    """The run had already executed this SQL; its result is reused, not re-run."""


class CandidateMemory(Protocol):
    """What the run already knows about a SQL text (the engine's candidate book)."""

    def known_result(self, sql: str) -> ExecResult | None: ...

    def rejection(self, sql: str) -> str | None: ...

    def reasons(self) -> list[str]:
        """Every reason the run has given so far for dropping a SQL, as prompts show it (a
        small model copies them into its SQL: `acts_sql.tools.pool.strip_echoed_reasons`)."""
        ...

    def dropped(self) -> list[str]:
        """The SQL texts the run dropped (the user's SQL, and every candidate refused,
        rejected or failing): a draw should not write them again (`LLMRequest.avoid`)."""
        ...


class SampleLedger:
    """The draws of one run, so that every LLM candidate is an independent one.

    No two samples share a seed, and a greedy prompt is asked once: the same
    prompt at temperature 0 can only repeat its answer, which would count as a
    vote it is not (a regenerated node whose prompt did not change asks for a
    sample instead). Thread-safe.
    """

    def __init__(self) -> None:
        self._seed = 0
        self._greedy: set[str] = set()
        self._lock = threading.Lock()

    def copy(self) -> SampleLedger:
        """A ledger in the same state, to predict draws without taking them."""
        twin = SampleLedger()
        with self._lock:
            twin._seed = self._seed
            twin._greedy = set(self._greedy)
        return twin

    def next_seed(self) -> int:
        with self._lock:
            self._seed += 1
            return self._seed

    def first_greedy(self, prompt_key: str) -> bool:
        """True the first time a greedy prompt is asked in this run."""
        with self._lock:
            if prompt_key in self._greedy:
                return False
            self._greedy.add(prompt_key)
            return True


@dataclass
class ToolEnv:
    """Everything a tool may use. The engine hands in traced wrappers."""

    executor: Executor
    llm: LLMBackend
    task: TaskContext
    json_retries: int = 2
    execution_enabled: bool = True
    pool: PoolSettings = field(default_factory=lambda: PoolSettings())
    memory: CandidateMemory | None = None
    draws: SampleLedger = field(default_factory=SampleLedger)


class ToolCall(BaseModel):
    """One node's invocation of a tool."""

    node_id: str
    input: dict[str, Any] = Field(default_factory=dict)
    path: list[PathStep] = Field(default_factory=list)
    base_sql: str = Field("", description="the SQL this node works from (candidate or original)")
    base_result: ExecResult | None = None


class ToolOutput(BaseModel):
    """A tool's structured result: one model per tool (its `Output`); this base has nothing
    to report (a failed outcome's usual output)."""

    def dump(self) -> dict[str, Any]:
        """The fields the tool set, as the trace's `node_finished` event writes them."""
        return self.model_dump(include=self.model_fields_set)


class ToolOutcome(BaseModel):
    """A tool's result: a prompt-friendly summary plus structured output."""

    status: Literal["done", "failed"]
    summary: str
    output: ToolOutput = Field(default_factory=ToolOutput)
    candidate_sql: str | None = None
    candidate_result: ExecResult | None = None
    candidates: list[PoolEntry] = Field(default_factory=list)
    """Every distinct candidate the node wrote (a pool); the first is `candidate_sql`."""
    error: str | None = None

    @classmethod
    def failed(cls, error: str, output: ToolOutput | None = None) -> ToolOutcome:
        return cls(
            status="failed", summary=f"failed: {error}", error=error, output=output or ToolOutput()
        )


class ToolArgs(BaseModel):
    """Base of every tool's argument model; unknown keys are ignored. Every field is
    `advertised` in the system prompt's tool list or `not_advertised`, with the reason."""

    model_config = ConfigDict(extra="ignore")


def advertised(placeholder: str, default: Any = ..., **field: Any) -> Any:
    """A field the system prompt's tool list shows, as `"name": placeholder`."""
    return Field(default, json_schema_extra={"advertised_as": placeholder}, **field)


def not_advertised(reason: str, default: Any = ..., **field: Any) -> Any:
    """A field the system prompt's tool list leaves out; `reason` says why."""
    return Field(default, json_schema_extra={"not_advertised": reason}, **field)


A = TypeVar("A", bound=ToolArgs, contravariant=True)


class Tool(Protocol[A]):
    """A tool as the engine and the prompts read it. The registry validates a node's input
    against `Args` once (`acts_sql.tools.registry.run_tool`) and hands `run` the result."""

    name: ClassVar[str]
    description: ClassVar[str]
    """What it does, as the system prompt's tool list says it."""
    Args: ClassVar[type[ToolArgs]]
    Output: ClassVar[type[ToolOutput]]
    """The model of its outcomes' `output` (a failure may report nothing: `ToolOutput`)."""
    uses_execution: ClassVar[bool]
    """It runs statements to gather evidence: off when execution tools are."""
    produces_candidate: ClassVar[bool]
    """It writes candidates (a pool) that the engine registers and judges."""

    def run(self, env: ToolEnv, call: ToolCall, args: A) -> ToolOutcome: ...
