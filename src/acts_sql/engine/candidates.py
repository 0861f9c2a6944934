"""Every candidate SQL of a run: verdicts, duplicates, and the best one so far."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from acts_sql.db.result import ExecResult
from acts_sql.sql.normalize import normalize_sql

Verdict = Literal["accepted", "rejected", "unjudged", "syntax_error"]


class Candidate(BaseModel):
    node: str
    sql: str
    result: ExecResult
    verdict: Verdict = "unjudged"
    reason: str = ""
    order: int = 0

    def rank(self) -> tuple[bool, bool, bool, bool, int]:
        """Higher is better: accepted, executes, not rejected, has rows, later."""
        return (
            self.verdict == "accepted",
            self.result.ok,
            self.verdict != "rejected",
            self.result.row_count > 0,
            self.order,
        )


class CandidateBook:
    def __init__(self, dialect: str) -> None:
        self.dialect = dialect
        self.candidates: list[Candidate] = []
        self._rejected: dict[str, Candidate] = {}

    def _key(self, sql: str) -> str:
        return normalize_sql(sql, self.dialect)

    def add(
        self, node: str, sql: str, result: ExecResult, verdict: Verdict = "unjudged"
    ) -> Candidate:
        candidate = Candidate(
            node=node, sql=sql, result=result.preview(), verdict=verdict, order=len(self.candidates)
        )
        self.candidates.append(candidate)
        return candidate

    def reject(self, candidate: Candidate, reason: str) -> None:
        candidate.verdict = "rejected"
        candidate.reason = reason
        self._rejected.setdefault(self._key(candidate.sql), candidate)

    def rejected_match(self, sql: str) -> Candidate | None:
        """The earlier rejected candidate this SQL is the same as, if any."""
        return self._rejected.get(self._key(sql))

    def rejected(self) -> list[Candidate]:
        return [c for c in self.candidates if c.verdict == "rejected"]

    def latest_for(self, node: str) -> Candidate | None:
        """The last candidate a node produced (a fix works from its parent's)."""
        return next((c for c in reversed(self.candidates) if c.node == node), None)

    def best(self) -> Candidate | None:
        return max(self.candidates, key=Candidate.rank, default=None)
