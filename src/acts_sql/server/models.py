"""Request and response bodies of the HTTP API (pydantic, unknown fields rejected).

A request names a configured database by its name and nothing else: there
is no field for a URL, a file path or an LLM backend, and an unknown field is
an error (``unknown_field``), so nothing can be smuggled past the
configuration.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from acts_sql.engine.inputs import MAX_QUESTION_CHARS, MAX_SQL_CHARS
from acts_sql.engine.options import CorrectionOptions
from acts_sql.engine.result import CorrectionResult
from acts_sql.server.config import DATABASE_NAME
from acts_sql.server.errors import ErrorBody

REQUEST_OPTIONS = frozenset(
    {"method", "budget", "candidates", "temperature", "execution_tools", "ambiguity_detection"}
)
"""The `CorrectionOptions` a request may set; the others stay the service's defaults."""


def _request_schema(schema: dict[str, Any]) -> None:
    properties = schema["properties"]
    for name in set(properties) - REQUEST_OPTIONS:
        del properties[name]


class RequestOptions(CorrectionOptions):
    """How the correction runs: the method, its budget, the candidate pool and the ablation
    switches (a `CorrectionOptions` with only these set; any other option is refused,
    `unknown_field`)."""

    model_config = ConfigDict(json_schema_extra=_request_schema)


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")

    database: str = Field(
        pattern=DATABASE_NAME,
        max_length=64,
        description="the name of a database in the service's configuration",
    )
    dialect: str | None = Field(
        None,
        pattern=r"^[A-Za-z0-9_]{1,32}$",
        description="optional; must be the configured database's dialect",
    )
    language: str | None = Field(
        None,
        pattern=r"^[A-Za-z0-9_]{1,32}$",
        description="optional: the query language of `sql` and of the answer (an installed "
        "plugin such as prql; `acts-sql languages`); default: the database's SQL",
    )
    options: RequestOptions = Field(
        default_factory=RequestOptions,
        description="a budget limit left out is the service's maximum; one above it is "
        "refused (budget_over_limit)",
    )
    wait: bool = Field(
        True,
        description="true: answer when the run has finished; false: answer 202 at once "
        "and follow the run at /v1/runs/{id}",
    )
    ask: bool = Field(
        False,
        description="when readings of an ambiguous phrase lead to different results and "
        "nothing is accepted, the run emits `choice_needed` and waits (within its wall-time "
        "budget) for POST /v1/runs/{id}/choice; use with wait: false",
    )


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty or only whitespace")
    return value


NonBlank = AfterValidator(_not_blank)


class CorrectRequest(_Request):
    """Correct `sql` so that it does what `question` (the issue) asks."""

    question: str = Field(
        "", max_length=MAX_QUESTION_CHARS, description="the user's issue or question"
    )
    sql: Annotated[str, NonBlank] = Field(
        min_length=1,
        max_length=MAX_SQL_CHARS,
        description="the SQL to correct (not blank; at most 250,000 characters)",
    )


class GenerateRequest(_Request):
    """Text-to-SQL: write the SQL for `question`, then correct it."""

    question: Annotated[str, NonBlank] = Field(
        min_length=1,
        max_length=MAX_QUESTION_CHARS,
        description="the question to answer with SQL (not blank; at most 100,000 characters)",
    )


class RunState(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"
    TIMED_OUT = "timed_out"
    INTERRUPTED = "interrupted"
    """The service stopped (or was killed) while the run was in progress."""


TERMINAL_STATES = frozenset(
    {RunState.FINISHED, RunState.FAILED, RunState.TIMED_OUT, RunState.INTERRUPTED}
)


class RunLinks(BaseModel):
    run: str = Field(description="GET: status, then the result (bearer token)")
    events: str = Field(description="GET: server-sent trace events (bearer token)")
    viewer: str = Field(description="the live debugging-tree page; the view key is in the URL")


class RunStatus(BaseModel):
    """A run that has not finished, or that failed, timed out or was interrupted."""

    run_id: str
    status: RunState
    kind: Literal["correct", "generate"]
    database: str
    created_at: float = Field(description="Unix time")
    started_at: float | None = None
    finished_at: float | None = None
    events: int = Field(description="trace events so far")
    links: RunLinks
    error: ErrorBody | None = None


class CorrectionResponse(CorrectionResult):
    """A finished run: the same object as `acts-sql fix --json`, plus the run's id."""

    run_id: str
    status: Literal[RunState.FINISHED] = RunState.FINISHED
    database: str
    links: RunLinks


class RunList(BaseModel):
    runs: list[RunStatus]


class Health(BaseModel):
    status: Literal["ok"] = "ok"
    active_runs: int
    max_concurrent_runs: int


class ChoiceRequest(BaseModel):
    """The reading the person chose, for a run that emitted `choice_needed`."""

    model_config = ConfigDict(extra="forbid")

    reading: str = Field(description="the `id` of one of the readings of `choice_needed`")
