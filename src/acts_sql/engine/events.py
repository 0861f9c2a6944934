"""Trace events as types: one payload model per event kind, joined on `kind`.

An event is the envelope (`seq`, `t`, `kind`, `node`, `tool`, `purpose`,
`summary`) and its kind's payload in `data`; `TraceEvent` is their union,
discriminated by `kind`. What each payload holds is told in docs/PROTOCOL.md
("Trace events"; a test keeps its list equal to `EventKind`). The JSON is the
trace file format: a payload writes only the fields it was given (so an event
reads as it always did), and keeps keys it does not know (older traces load).
The viewer and the terminal renderer name kinds through `EventKind`.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    model_serializer,
)

from acts_sql.tools.rule_chain import Firing


class EventKind(StrEnum):
    """Every kind by name (`EventKind.LLM_CALL == "llm_call"`), as the viewer's script has them."""

    RUN_STARTED = "run_started"
    INITIAL_SQL = "initial_sql"
    PLAN = "plan"
    PLAN_FAILED = "plan_failed"
    NODE_STARTED = "node_started"
    NODE_FINISHED = "node_finished"
    EXPANDED = "expanded"
    CHOICE = "choice"
    CHOICE_FAILED = "choice_failed"
    CANDIDATE = "candidate"
    CANDIDATE_MISSING = "candidate_missing"
    RAW_CANDIDATE = "raw_candidate"
    POOL = "pool"
    FIX_INSERTED = "fix_inserted"
    JUDGEMENT = "judgement"
    UNCONFIRMED = "unconfirmed"
    REFUSAL = "refusal"
    REPLAN = "replan"
    JUDGE_FAILED = "judge_failed"
    PRUNED = "pruned"
    BACKTRACK = "backtrack"
    GRAFTED = "grafted"
    LLM_CALL = "llm_call"
    STATEMENT = "statement"
    RULE_FIRED = "rule_fired"
    SQL_TRANSLATED = "sql_translated"
    LLM_REPAIR = "llm_repair"
    DAC_ENTITIES = "dac_entities"
    DAC_SKELETON = "dac_skeleton"
    DAC_FEEDBACK = "dac_feedback"
    DAC_DROPPED = "dac_dropped"
    VOTE = "vote"
    BUDGET_EXHAUSTED = "budget_exhausted"
    LLM_FAILED = "llm_failed"
    RUN_FINISHED = "run_finished"


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


class UnconfirmedData(EventData):
    group: str
    votes: int
    needed: int
    labels: dict[str, str]


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


class RunStartedEvent(Event):
    kind: Literal[EventKind.RUN_STARTED] = EventKind.RUN_STARTED
    data: RunStartedData


class InitialSqlEvent(Event):
    kind: Literal[EventKind.INITIAL_SQL] = EventKind.INITIAL_SQL
    data: InitialSqlData


class PlanEvent(Event):
    kind: Literal[EventKind.PLAN] = EventKind.PLAN
    data: PlanData


class PlanFailedEvent(Event):
    kind: Literal[EventKind.PLAN_FAILED] = EventKind.PLAN_FAILED
    data: PlanFailedData


class NodeStartedEvent(Event):
    kind: Literal[EventKind.NODE_STARTED] = EventKind.NODE_STARTED
    data: NodeStartedData


class NodeFinishedEvent(Event):
    kind: Literal[EventKind.NODE_FINISHED] = EventKind.NODE_FINISHED
    data: NodeFinishedData


class ExpandedEvent(Event):
    kind: Literal[EventKind.EXPANDED] = EventKind.EXPANDED
    data: ExpandedData


class ChoiceEvent(Event):
    kind: Literal[EventKind.CHOICE] = EventKind.CHOICE
    data: ChoiceData


class ChoiceFailedEvent(Event):
    kind: Literal[EventKind.CHOICE_FAILED] = EventKind.CHOICE_FAILED
    data: ChoiceFailedData


class CandidateEvent(Event):
    kind: Literal[EventKind.CANDIDATE] = EventKind.CANDIDATE
    data: CandidateData


class CandidateMissingEvent(Event):
    kind: Literal[EventKind.CANDIDATE_MISSING] = EventKind.CANDIDATE_MISSING
    data: CandidateMissingData


class RawCandidateEvent(Event):
    kind: Literal[EventKind.RAW_CANDIDATE] = EventKind.RAW_CANDIDATE
    data: RawCandidateData


class PoolEvent(Event):
    kind: Literal[EventKind.POOL] = EventKind.POOL
    data: PoolData


class FixInsertedEvent(Event):
    kind: Literal[EventKind.FIX_INSERTED] = EventKind.FIX_INSERTED
    data: FixInsertedData


class JudgementEvent(Event):
    kind: Literal[EventKind.JUDGEMENT] = EventKind.JUDGEMENT
    data: JudgementData


class UnconfirmedEvent(Event):
    kind: Literal[EventKind.UNCONFIRMED] = EventKind.UNCONFIRMED
    data: UnconfirmedData


class RefusalEvent(Event):
    kind: Literal[EventKind.REFUSAL] = EventKind.REFUSAL
    data: RefusalData


class ReplanEvent(Event):
    kind: Literal[EventKind.REPLAN] = EventKind.REPLAN
    data: ReplanData


class JudgeFailedEvent(Event):
    kind: Literal[EventKind.JUDGE_FAILED] = EventKind.JUDGE_FAILED
    data: JudgeFailedData


class PrunedEvent(Event):
    kind: Literal[EventKind.PRUNED] = EventKind.PRUNED
    data: PrunedData


class BacktrackEvent(Event):
    kind: Literal[EventKind.BACKTRACK] = EventKind.BACKTRACK
    data: BacktrackData


class GraftedEvent(Event):
    kind: Literal[EventKind.GRAFTED] = EventKind.GRAFTED
    data: GraftedData


class LlmCallEvent(Event):
    kind: Literal[EventKind.LLM_CALL] = EventKind.LLM_CALL
    data: LlmCallData


class StatementEvent(Event):
    kind: Literal[EventKind.STATEMENT] = EventKind.STATEMENT
    data: StatementData


class RuleFiredEvent(Event):
    kind: Literal[EventKind.RULE_FIRED] = EventKind.RULE_FIRED
    data: RuleFiredData


class SqlTranslatedEvent(Event):
    kind: Literal[EventKind.SQL_TRANSLATED] = EventKind.SQL_TRANSLATED
    data: SqlTranslatedData


class LlmRepairEvent(Event):
    kind: Literal[EventKind.LLM_REPAIR] = EventKind.LLM_REPAIR
    data: LlmRepairData


class DacEntitiesEvent(Event):
    kind: Literal[EventKind.DAC_ENTITIES] = EventKind.DAC_ENTITIES
    data: DacEntitiesData


class DacSkeletonEvent(Event):
    kind: Literal[EventKind.DAC_SKELETON] = EventKind.DAC_SKELETON
    data: DacSkeletonData


class DacFeedbackEvent(Event):
    kind: Literal[EventKind.DAC_FEEDBACK] = EventKind.DAC_FEEDBACK
    data: DacFeedbackData


class DacDroppedEvent(Event):
    kind: Literal[EventKind.DAC_DROPPED] = EventKind.DAC_DROPPED
    data: DacDroppedData


class VoteEvent(Event):
    kind: Literal[EventKind.VOTE] = EventKind.VOTE
    data: VoteData


class BudgetExhaustedEvent(Event):
    kind: Literal[EventKind.BUDGET_EXHAUSTED] = EventKind.BUDGET_EXHAUSTED
    data: BudgetExhaustedData


class LlmFailedEvent(Event):
    kind: Literal[EventKind.LLM_FAILED] = EventKind.LLM_FAILED
    data: LlmFailedData


class RunFinishedEvent(Event):
    kind: Literal[EventKind.RUN_FINISHED] = EventKind.RUN_FINISHED
    data: RunFinishedData


TraceEvent = Annotated[
    RunStartedEvent
    | InitialSqlEvent
    | PlanEvent
    | PlanFailedEvent
    | NodeStartedEvent
    | NodeFinishedEvent
    | ExpandedEvent
    | ChoiceEvent
    | ChoiceFailedEvent
    | CandidateEvent
    | CandidateMissingEvent
    | RawCandidateEvent
    | PoolEvent
    | FixInsertedEvent
    | JudgementEvent
    | UnconfirmedEvent
    | RefusalEvent
    | ReplanEvent
    | JudgeFailedEvent
    | PrunedEvent
    | BacktrackEvent
    | GraftedEvent
    | LlmCallEvent
    | StatementEvent
    | RuleFiredEvent
    | SqlTranslatedEvent
    | LlmRepairEvent
    | DacEntitiesEvent
    | DacSkeletonEvent
    | DacFeedbackEvent
    | DacDroppedEvent
    | VoteEvent
    | BudgetExhaustedEvent
    | LlmFailedEvent
    | RunFinishedEvent,
    Field(discriminator="kind"),
]
"""Any trace event, typed by its `kind`."""

EVENTS: TypeAdapter[TraceEvent] = TypeAdapter(TraceEvent)
"""Validates (`EVENTS.validate_json(text)`) and exports (`EVENTS.json_schema()`) events."""

EVENT_TYPES: dict[type[EventData], Callable[..., Event]] = {
    t.model_fields["data"].annotation: t for t in get_args(get_args(TraceEvent)[0])
}
"""Each payload's event (one kind per payload)."""
