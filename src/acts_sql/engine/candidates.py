"""Every candidate SQL of a run: verdicts, result groups, duplicates, the ranking.

A candidate is one distinct SQL text (after ``normalize_sql``) with where it
came from (``origin``: ``greedy``, ``sample``, ``retry``, ``raw``, ``repair``,
``rule:<name>``), how many generations produced it (``votes``), its execution
result and the group of candidates that return the same rows (``group``). A
generation that repeats a known SQL is not a new candidate: it adds a vote to
the one it repeats and is not executed again. Each draw is one vote: the raw
rewrite, the greedy answer, each sample, each repair, each rule repair.

Verdicts: ``unjudged`` (ran, not judged yet), ``failed`` (did not run),
``refused`` (the engine's trust rules, see :mod:`acts_sql.engine.trust`),
``rejected`` (the judge, or a repeat of a rejected result), ``accepted``.

**Support.** A result group's support is the votes of its members that are
not refused (`support`); the votes that count are those of the candidates
that ran and are not refused (`running_votes`). A group is a *majority*
(`is_majority`) when at least 2 votes agree on it and they are more than
half of those votes: the rule `vote` accepts with, applied to the run.

**The ranking** (`rank`), used when nothing is accepted: accepted > runs >
not refused > not rejected *with evidence* (a judge's rejection whose reason
the rows bear out, `engine/verdict_check.py`; the group's `checked`) > the
most support > the judge's most favourable verdict on its rows > the raw
rewrite or a rule repair (origin ``raw``/``rule``) > earlier. So the answer
is the candidate most independent candidates agree on; a refusal (the user's
SQL or the user's rows) or a rejection backed by the rows is what lets a
smaller group win. The judge's verdict only breaks ties of support; when
every group has one vote that is every group, and the judge orders them.
The verdict is on a result: a candidate written after the judge rejected its
rows ranks as rejected too. A rejection of a majority group that its rows
do not bear out is overruled (`candidate_stage`): the group keeps no
rejection (`overruled` lists the reasons) and ranks on its support.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from acts_sql.db.result import ExecResult
from acts_sql.engine.fingerprint import ResultShape
from acts_sql.sql.query_text import normalize_sql

Verdict = Literal["accepted", "rejected", "unjudged", "refused", "failed"]
JudgeView = Literal["accept", "reject"]

_JUDGE_SCORE = {"accept": 2, None: 1, "reject": 0}
PREFERRED_ORIGINS = ("raw", "rule")
"""Origins preferred on a tie of support and verdict: the raw rewrite and the rule repairs."""


class Candidate(BaseModel):
    id: str
    node: str
    sql: str
    origin: str = "greedy"
    votes: int = 1
    result: ExecResult
    shape: ResultShape | None = Field(None, exclude=True)
    group: str | None = None
    verdict: Verdict = "unjudged"
    reason: str = ""
    judge: JudgeView | None = Field(
        None, description="what the judge said, before the engine's rules"
    )
    order: int = 0

    @property
    def runs(self) -> bool:
        return self.result.ok


class ResultGroup(BaseModel):
    """Candidates that return the same rows."""

    id: str
    fingerprint: str
    members: list[str] = Field(default_factory=list)
    votes: int = 0
    rejected_reason: str = ""
    """Set when the judge rejected this result: a later candidate with it is rejected too."""
    checked: str = ""
    """The claim of the rejection's reason that these rows bear out (a rejection with evidence:
    the group drops below every group without one)."""
    overruled: list[str] = Field(default_factory=list)
    """Rejections of this result overruled: a majority group, and no claim the rows bear out."""


class CandidateBook:
    """The candidates of one run, their groups, and the lookups the engine needs."""

    def __init__(self, dialect: str) -> None:
        self.dialect = dialect
        self.candidates: list[Candidate] = []
        self.groups: dict[str, ResultGroup] = {}
        self._by_key: dict[str, Candidate] = {}
        self._by_id: dict[str, Candidate] = {}
        self.duplicates = 0

    def key(self, sql: str) -> str:
        return normalize_sql(sql, self.dialect)

    def __getitem__(self, candidate_id: str) -> Candidate:
        return self._by_id[candidate_id]

    def known(self, sql: str) -> Candidate | None:
        """The candidate this SQL repeats, if any."""
        return self._by_key.get(self.key(sql))

    def add_vote(self, candidate: Candidate) -> None:
        """A generation repeated `candidate`: one more vote, no new execution."""
        candidate.votes += 1
        self.duplicates += 1
        if candidate.group is not None:
            self.groups[candidate.group].votes += 1

    def add(
        self,
        node: str,
        sql: str,
        result: ExecResult,
        shape: ResultShape | None,
        *,
        origin: str,
        votes: int = 1,
    ) -> Candidate:
        """A new distinct candidate; grouped by its result when it ran."""
        candidate = Candidate(
            id=f"c{len(self.candidates) + 1}",
            node=node,
            sql=sql,
            origin=origin,
            votes=votes,
            result=result.preview(),
            shape=shape,
            verdict="unjudged" if result.ok else "failed",
            reason=result.failure(),
            order=len(self.candidates),
        )
        if shape is not None:
            group = self._group_for(shape.fingerprint)
            group.members.append(candidate.id)
            group.votes += votes
            candidate.group = group.id
        self.candidates.append(candidate)
        self._by_key.setdefault(self.key(sql), candidate)
        self._by_id[candidate.id] = candidate
        return candidate

    def _group_for(self, fingerprint: str) -> ResultGroup:
        for group in self.groups.values():
            if group.fingerprint == fingerprint:
                return group
        group = ResultGroup(id=f"g{len(self.groups) + 1}", fingerprint=fingerprint)
        self.groups[group.id] = group
        return group

    # ------------------------------------------------------------------ verdicts
    def refuse(self, candidate: Candidate, reason: str) -> None:
        candidate.verdict, candidate.reason = "refused", reason

    def reject(self, candidate: Candidate, reason: str, *, by_judge: bool = True) -> None:
        candidate.verdict, candidate.reason = "rejected", reason
        if by_judge:
            candidate.judge = "reject"

    def reject_group(self, group_id: str, reason: str, *, checked: str = "") -> None:
        """The judge rejected this result; `checked`: the claim its rows bear out, if any."""
        group = self.groups[group_id]
        group.rejected_reason = reason
        group.checked = group.checked or checked

    def overrule(self, group_id: str, reason: str) -> None:
        """A rejection of this result that does not count (see the module doc)."""
        self.groups[group_id].overruled.append(reason)

    def accept(self, candidate: Candidate, reason: str) -> None:
        candidate.verdict, candidate.reason, candidate.judge = "accepted", reason, "accept"

    def rejected_group_of(self, candidate: Candidate) -> ResultGroup | None:
        """The group of `candidate` when the judge already rejected that result."""
        if candidate.group is None:
            return None
        group = self.groups[candidate.group]
        return group if group.rejected_reason else None

    def rejected(self) -> list[Candidate]:
        return [c for c in self.candidates if c.verdict in ("rejected", "refused")]

    def members(self, group_id: str) -> list[Candidate]:
        return [self._by_id[m] for m in self.groups[group_id].members]

    def representative(self, group_id: str) -> Candidate:
        """The member with the most votes (earliest on a tie)."""
        return max(self.members(group_id), key=lambda c: (c.votes, -c.order))

    def last_running(self, nodes: list[str]) -> Candidate | None:
        """The latest candidate that ran, produced by one of `nodes`."""
        wanted = set(nodes)
        return next((c for c in reversed(self.candidates) if c.node in wanted and c.runs), None)

    # ------------------------------------------------------------------ ranking
    def group_votes(self, candidate: Candidate) -> int:
        return self.groups[candidate.group].votes if candidate.group else candidate.votes

    def support(self, group_id: str | None) -> int:
        """The votes of a group's members that are not refused."""
        if group_id is None:
            return 0
        return sum(c.votes for c in self.members(group_id) if c.verdict != "refused")

    def running_votes(self) -> int:
        """The votes of every candidate that ran and is not refused."""
        return sum(self.support(g) for g in self.groups)

    def is_majority(self, group_id: str) -> bool:
        """At least 2 votes, and more than half of `running_votes`."""
        votes = self.support(group_id)
        return votes >= 2 and 2 * votes > self.running_votes()

    def rank(self, candidate: Candidate) -> tuple[bool, bool, bool, bool, int, int, bool, int]:
        """Higher is better; see the module doc."""
        group = self.groups[candidate.group] if candidate.group else None
        return (
            candidate.verdict == "accepted",
            candidate.runs,
            candidate.verdict != "refused",
            not (group is not None and group.checked),
            self.support(candidate.group) if group else 0,
            _JUDGE_SCORE[self.judge_view(candidate)],
            candidate.origin.split(":")[0] in PREFERRED_ORIGINS,
            -candidate.order,
        )

    def judge_view(self, candidate: Candidate) -> JudgeView | None:
        """What the judge said of this candidate's result: its own verdict, else "reject"
        when the judge rejected a group with the same rows."""
        if candidate.judge is None and self.rejected_group_of(candidate) is not None:
            return "reject"
        return candidate.judge

    def ranked(self) -> list[Candidate]:
        return sorted(self.candidates, key=self.rank, reverse=True)

    def best(self) -> Candidate | None:
        ranked = self.ranked()
        return ranked[0] if ranked else None
