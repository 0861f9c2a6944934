"""Trace events as types: one payload model per event kind, joined on `kind`.

An event is the envelope (`seq`, `t`, `kind`, `node`, `tool`, `purpose`,
`summary`) and its kind's payload in `data`. `EventKind` names each kind with
its payload model; each kind's event class is made from it, and `TraceEvent`
is their union, discriminated by `kind`. A type checker sees an `Event`, and
narrows the payload (`isinstance(event.data, LlmCallData)`), as the terminal
renderer does. What each payload holds is told in docs/PROTOCOL.md
("Trace events"; a test keeps its list equal to `EventKind`). The JSON is the
trace file format: a payload writes only the fields it was given (so an event
reads as it always did), and keeps keys it does not know (older traces load).
The viewer and the terminal renderer name kinds through `EventKind`.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    create_model,
    model_serializer,
)

from acts_sql.tools.rule_chain import Firing


class EventData(BaseModel):
    """A payload: written with the fields it was given only (as keyword data always was),
    and read as the dict it was too (`data["sql"]`, `data.get("sql")`, `"sql" in data`)."""

    model_config = ConfigDict(extra="allow")

    @model_serializer(mode="wrap")
    def _given_only(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        given = self.model_fields_set
        return {k: v for k, v in handler(self).items() if k in given}

    def __contains__(self, key: str) -> bool:
        return key in self.model_fields_set

    def __getitem__(self, key: str) -> Any:
        if key not in self:
            raise KeyError(key)
        return getattr(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key) if key in self.model_fields_set else default


class RunStartedData(EventData):
    method: str
    dialect: str
    question: str
    sql: str | None
    options: dict[str, Any]


class InitialSqlData(EventData):
    ok: bool
    sql: str | None = None


class PlanData(EventData):
    nodes: list[dict[str, Any]] = []
    replan: bool = False
    plan: dict[str, Any]
    attempts: int = 1
    chained: list[str] = []
    repeats: dict[str, Any] = {}
    repairs: list[str] = []


class PlanFailedData(EventData):
    nodes: list[dict[str, Any]] = []
    replan: bool = False
    reason: str | None = None
    plan: dict[str, Any]


class NodeStartedData(EventData):
    input: dict[str, Any] = {}


class NodeFinishedData(EventData):
    status: str
    output: dict[str, Any] | None = None
    error: str | None = None


class ExpandedData(EventData):
    children: list[str]


class GraftedData(EventData):
    children: list[str]


class ChoiceData(EventData):
    cursor: str
    options: list[str]


class ChoiceFailedData(EventData):
    reason: str | None
    cursor: str


class ChoiceNeededData(EventData):
    """Readings of an ambiguous phrase led to different results and nothing was accepted:
    the person is asked (`acts_sql.engine.choice`); each reading with its SQL and first rows."""

    readings: list[dict[str, Any]]
    timeout: float
    """Seconds the run waits for the answer (what is left of its wall-time budget)."""


class ChoiceMadeData(EventData):
    """The reading the run returns: the person's (`by` "person"), or, with no answer in
    time or none given, the engine's own best candidate (`by` "timeout")."""

    reading: str | None
    by: Literal["person", "timeout"]
    candidate: str | None = None


class CandidateData(EventData):
    sql: str
    status: str
    statements: list[str] | None = None
    candidate: str = ""
    origin: str = ""
    duplicate: bool = False
    group: str | None = None
    verdict: str = "unjudged"
    reason: str = ""


class CandidateMissingData(EventData):
    origin: str


class RawCandidateData(EventData):
    """The raw rewrite (`--raw-candidate`) had no ```sql block."""


class PoolData(EventData):
    candidates: list[str]
    groups: list[str]


class FixInsertedData(EventData):
    child: str
    candidate: str | None = None


class JudgementData(EventData):
    verdict: Literal["accept", "reject"]
    by: Literal["agent", "engine"]
    sql: str | None
    group: str | None = None
    candidate: str | None = None
    backtrack_to: str | None = None
    judged: bool = True
    labels: dict[str, str] = {}
    checked: dict[str, str] = {}
    """A rejection: group id -> the claim of its reason that the group's rows bear out."""


class EvidenceData(EventData):
    """The evidence gate's weighing, before any plan (`acts_sql.engine.evidence`)."""

    rule: str
    accepted: bool
    candidates: list[dict[str, Any]]
    group: str | None = None
    candidate: str | None = None
    checks: list[dict[str, Any]] = []
    allowed_calls: int | None = None
    """Accepting nothing: the LLM calls the run may make in all, scaled to these candidates
    (`acts_sql.engine.scaled_budget`); None: the budget's limit."""
    scaled: str | None = None
    """Why the calls were scaled so."""


class BudgetScaledData(EventData):
    """The search's scaled allowance changes (`acts_sql.engine.scaled_budget`): it grows when
    independent candidates came to agree on a result that may be accepted (`group`, `votes`) or
    ambiguity detection gave readings to explore (`readings`); it ends (no more calls) when the
    judge's rejection of the result most candidates agree on (`group`, `votes`) is overruled."""

    allowed_calls: int
    group: str | None = None
    votes: int | None = None
    readings: int | None = None


class UnconfirmedData(EventData):
    group: str
    votes: int
    needed: int
    labels: dict[str, str]


class OverruledData(EventData):
    """A judge's rejection of a group most candidates agree on, not backed by its rows:
    the group stays ranked (`engine/verdict_check.py`)."""

    group: str
    votes: int
    total: int
    reason: str
    why: str
    labels: dict[str, str] = {}


class RefusalData(EventData):
    candidate: str
    verdict: str
    sql: str


class ReplanData(EventData):
    lessons: str


class JudgeFailedData(EventData):
    reason: str | None


class PrunedData(EventData):
    nodes: list[str]
    reason: str


class BacktrackData(EventData):
    to: str | None
    by: Literal["agent", "engine"] | None = None


class LlmCallData(EventData):
    ok: bool
    error: str | None = None
    prompt_tokens: int = 0
    cached_prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    replayed: bool = False
    response: str = ""
    timeout_s: float | None = None
    before_any_reply: bool = False
    stopped_by: str | None = None
    decoder: str | None = None
    steered: int = 0
    constrained: bool = False
    """The local model's SQL was held to the schema's names (`sql_names`)."""
    refused_tokens: int = 0
    """Tokens the name constraint refused in this call."""
    temperature: float = 0.0
    sent_ahead: bool = False


class StatementData(EventData):
    sql: str
    status: str
    row_count: int
    truncated: bool
    error: str | None
    error_kind: str | None = None
    seconds: float


class RuleFiredData(Firing, EventData):
    """A rule's say about a statement (`Firing`'s fields)."""


class SqlTranslatedData(EventData):
    sql: str
    written: str


class LlmRepairData(EventData):
    ok: bool
    sql: str | None = None
    candidate: str | None = None
    hints: str = ""


class DacEntitiesData(EventData):
    linked: list[dict[str, Any]]
    kept: list[dict[str, Any]]
    error: str | None


class DacSkeletonData(EventData):
    sketch: str | None
    skeleton: str | None
    sql_skeleton: str | None


class DacFeedbackData(EventData):
    feedback: str


class DacDroppedData(EventData):
    """`dac`: a correction not kept (the summary says why)."""


class VoteData(EventData):
    winner: str


class BudgetExhaustedData(EventData):
    which: str


class LlmFailedData(EventData):
    """The LLM backend failed (the summary holds its error)."""


class RunFinishedData(EventData):
    accepted: bool
    sql: str


class EventKind(StrEnum):
    """Every kind by name (`EventKind.LLM_CALL == "llm_call"`), as the viewer's script has them,
    with its payload model (`EventKind.LLM_CALL.payload is LlmCallData`)."""

    payload: type[EventData]

    def __new__(cls, value: str, payload: type[EventData]) -> EventKind:
        kind = str.__new__(cls, value)
        kind._value_ = value
        kind.payload = payload
        return kind

    RUN_STARTED = "run_started", RunStartedData
    INITIAL_SQL = "initial_sql", InitialSqlData
    PLAN = "plan", PlanData
    PLAN_FAILED = "plan_failed", PlanFailedData
    NODE_STARTED = "node_started", NodeStartedData
    NODE_FINISHED = "node_finished", NodeFinishedData
    EXPANDED = "expanded", ExpandedData
    CHOICE = "choice", ChoiceData
    CHOICE_FAILED = "choice_failed", ChoiceFailedData
    CANDIDATE = "candidate", CandidateData
    CANDIDATE_MISSING = "candidate_missing", CandidateMissingData
    RAW_CANDIDATE = "raw_candidate", RawCandidateData
    POOL = "pool", PoolData
    FIX_INSERTED = "fix_inserted", FixInsertedData
    JUDGEMENT = "judgement", JudgementData
    EVIDENCE = "evidence", EvidenceData
    UNCONFIRMED = "unconfirmed", UnconfirmedData
    OVERRULED = "overruled", OverruledData
    REFUSAL = "refusal", RefusalData
    REPLAN = "replan", ReplanData
    JUDGE_FAILED = "judge_failed", JudgeFailedData
    PRUNED = "pruned", PrunedData
    BACKTRACK = "backtrack", BacktrackData
    GRAFTED = "grafted", GraftedData
    LLM_CALL = "llm_call", LlmCallData
    STATEMENT = "statement", StatementData
    RULE_FIRED = "rule_fired", RuleFiredData
    SQL_TRANSLATED = "sql_translated", SqlTranslatedData
    LLM_REPAIR = "llm_repair", LlmRepairData
    DAC_ENTITIES = "dac_entities", DacEntitiesData
    DAC_SKELETON = "dac_skeleton", DacSkeletonData
    DAC_FEEDBACK = "dac_feedback", DacFeedbackData
    DAC_DROPPED = "dac_dropped", DacDroppedData
    VOTE = "vote", VoteData
    BUDGET_SCALED = "budget_scaled", BudgetScaledData
    CHOICE_NEEDED = "choice_needed", ChoiceNeededData
    CHOICE_MADE = "choice_made", ChoiceMadeData
    BUDGET_EXHAUSTED = "budget_exhausted", BudgetExhaustedData
    LLM_FAILED = "llm_failed", LlmFailedData
    RUN_FINISHED = "run_finished", RunFinishedData


class Event(BaseModel):
    """The envelope every event shares; `data` is its kind's payload."""

    seq: int
    t: float = Field(description="seconds since the run started")
    kind: EventKind
    node: str | None = None
    tool: str | None = None
    purpose: str | None = None
    summary: str = ""
    data: EventData


EVENT_TYPES: dict[type[EventData], Callable[..., Event]] = {
    kind.payload: create_model(
        kind.payload.__name__.removesuffix("Data") + "Event",
        __base__=Event,
        kind=(Literal[kind], kind),  # type: ignore[arg-type]  # a literal known at run time
        data=(kind.payload, ...),
    )
    for kind in EventKind
}
"""Each payload's event class (`RunStartedData` -> `RunStartedEvent`), its `kind` a literal."""
globals().update({t.__name__: t for t in EVENT_TYPES.values()})  # where pickle looks them up

if TYPE_CHECKING:
    TraceEvent: TypeAlias = Event
else:
    _ANY_EVENT = Union[tuple(EVENT_TYPES.values())]  # noqa: UP007 (made at run time)
    TraceEvent = Annotated[_ANY_EVENT, Field(discriminator="kind")]
"""Any trace event, one of `EVENT_TYPES` picked by its `kind` (to a type checker, an `Event`:
`isinstance(event.data, JudgementData)` narrows its payload)."""

EVENTS: TypeAdapter[TraceEvent] = TypeAdapter(TraceEvent)
"""Validates (`EVENTS.validate_json(text)`) and exports (`EVENTS.json_schema()`) events."""
