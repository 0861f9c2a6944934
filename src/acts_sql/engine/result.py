"""The typed result of one correction: what `fix --json` prints."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from acts_sql.db.result import ExecResult
from acts_sql.engine.events import TraceEvent
from acts_sql.llm.base import Usage


class UsageSummary(BaseModel):
    llm_calls: int = 0
    prompt_tokens: int = 0
    cached_prompt_tokens: int = 0
    completion_tokens: int = 0
    replayed_llm_calls: int = Field(0, description="calls answered by the record/replay cache")
    llm_seconds: float = 0.0
    seconds: float = Field(0.0, description="wall time of the whole correction")
    statements: int = 0
    by_purpose: dict[str, int] = Field(default_factory=dict)
    sent_ahead_llm_calls: int = Field(
        0, description="calls whose reply was requested ahead, while the run waited (--parallel)"
    )
    unused_prefetches: int = Field(
        0,
        description="requests sent ahead that the run never made (a branch not taken): "
        "they cost an endpoint call and changed nothing",
    )

    @classmethod
    def from_calls(
        cls,
        calls: list[Usage],
        *,
        seconds: float,
        statements: int,
        sent_ahead: int = 0,
        unused_prefetches: int = 0,
    ) -> UsageSummary:
        by_purpose: dict[str, int] = {}
        for call in calls:
            by_purpose[call.purpose] = by_purpose.get(call.purpose, 0) + 1
        return cls(
            llm_calls=len(calls),
            replayed_llm_calls=sum(1 for c in calls if c.replayed),
            prompt_tokens=sum(c.prompt_tokens for c in calls),
            cached_prompt_tokens=sum(c.cached_prompt_tokens for c in calls),
            completion_tokens=sum(c.completion_tokens for c in calls),
            llm_seconds=round(sum(c.seconds for c in calls), 4),
            seconds=round(seconds, 4),
            statements=statements,
            by_purpose=by_purpose,
            sent_ahead_llm_calls=sent_ahead,
            unused_prefetches=unused_prefetches,
        )


class CorrectionResult(BaseModel):
    """The outcome: the SQL, whether the agent accepted it, and how it got there."""

    sql: str
    accepted: bool
    original_sql: str
    method: str
    dialect: str
    question: str
    reason: str = Field("", description="why the search stopped")
    generated_initial_sql: bool = Field(
        False, description="text-to-SQL mode: the original was generated"
    )
    statements: list[str] = Field(
        default_factory=list, description="the SQL as a list of statements"
    )
    result: ExecResult | None = Field(None, description="execution result of `sql` (first rows)")
    usage: UsageSummary = Field(default_factory=lambda: UsageSummary())
    tree: list[dict[str, Any]] = Field(default_factory=list, description="final plan tree nodes")
    candidates: list[dict[str, Any]] = Field(
        default_factory=list,
        description="every distinct candidate: id, node, sql, origin, votes, result (first "
        "rows), group, verdict (accepted, rejected, unjudged, refused, failed), reason, judge",
    )
    groups: list[dict[str, Any]] = Field(
        default_factory=list,
        description="result groups: id, fingerprint, members (candidate ids), votes, "
        "rejected_reason, checked (the claim of a rejection its rows bear out), overruled "
        "(rejections overruled: a majority, and no claim its rows bear out)",
    )
    trace: list[TraceEvent] = Field(default_factory=list)
