"""Asking the person: when the readings of an ambiguous phrase lead to different results and
the evidence cannot choose, the run can ask instead of guessing.

The question is asked once, at the end of a search that accepted nothing
(`TreeSearch.outcome`), when at least two reading branches (the children
`detect_ambiguities` added, origin `expansion`) each hold a candidate that runs and is
not refused, and their best candidates return different results. Each reading is shown with
its best candidate's SQL and first rows (`reading_options`). The `ChoiceAsker` the caller
passed (`acts_sql.correct(..., asker=...)`; the CLI's `fix --ask`) answers with a reading's
id, or None. It is given the seconds left of the run's wall-time budget: the wait counts
against the budget, and no answer in time (None) leaves the engine's own choice. The chosen
candidate is returned, not accepted: the person chose a reading, no judge accepted it. The
trace records `choice_needed` and `choice_made` (`by`: "person" or "timeout"). Without an
asker nothing changes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol

from pydantic import BaseModel, Field

from acts_sql.engine.candidates import Candidate, CandidateBook
from acts_sql.engine.tree import PlanTree

PREVIEW_ROWS = 5
EXPANSION = "expansion"


class ReadingOption(BaseModel):
    """One reading, with the best candidate of its branch."""

    id: str
    """The reading's node in the tree (`n1.2`)."""
    reading: str
    sql: str
    columns: list[str] = Field(default_factory=list)
    rows: list[list[Any]] = Field(default_factory=list)
    """The first `PREVIEW_ROWS` rows."""
    row_count: int = 0
    candidate: str = Field("", exclude=True)


class ChoiceQuestion(BaseModel):
    """What the person is asked: the issue, and each reading with its SQL and first rows."""

    question: str
    readings: list[ReadingOption]


class ChoiceAsker(Protocol):
    """Answers a `ChoiceQuestion` with a reading's id within `timeout` seconds, or None."""

    def __call__(self, question: ChoiceQuestion, timeout: float) -> str | None: ...


def reading_options(tree: PlanTree, book: CandidateBook) -> list[ReadingOption]:
    """The readings worth asking about: each reading branch's best candidate that runs and is
    not refused; empty unless at least two of them return different results."""
    order = {c.id: k for k, c in enumerate(book.ranked())}
    options: list[ReadingOption] = []
    for node in tree.nodes.values():
        if node.origin != EXPANSION:
            continue
        inside = {node.id, *tree.subtree(node.id)}
        kept = [
            c
            for c in book.candidates
            if c.node in inside and c.runs and c.verdict not in ("refused", "failed")
        ]
        if kept:
            options.append(_option(node.id, node.description, min(kept, key=lambda c: order[c.id])))
    groups = {book[o.candidate].group for o in options}
    return options if len(groups) >= 2 else []


def _option(node_id: str, description: str, best: Candidate) -> ReadingOption:
    return ReadingOption(
        id=node_id,
        reading=description,
        sql=best.sql,
        columns=list(best.result.columns),
        rows=[list(r) for r in best.result.rows[:PREVIEW_ROWS]],
        row_count=best.result.row_count,
        candidate=best.id,
    )


class ChoiceSlot:
    """A `ChoiceAsker` for a person who answers from another thread (the service's
    `POST /v1/runs/{id}/choice`, the MCP server's `choose_reading`): the run's thread
    publishes the question and waits at most its timeout for `answer`."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self.question: ChoiceQuestion | None = None
        self._answer: str | None = None
        self._answered = False

    def __call__(self, question: ChoiceQuestion, timeout: float) -> str | None:
        with self._changed:
            self.question, self._answered = question, False
            self._changed.notify_all()
            self._changed.wait_for(lambda: self._answered, timeout=timeout)
            self.question = None
            return self._answer if self._answered else None

    def offered(self) -> list[str]:
        """The ids of the readings the run waits to hear about; empty when it does not wait."""
        with self._changed:
            return [r.id for r in self.question.readings] if self.question else []

    def answer(self, reading: str) -> bool:
        """Give the waiting run `reading`; False when it does not wait for that reading."""
        with self._changed:
            if self.question is None or reading not in [r.id for r in self.question.readings]:
                return False
            self._answer, self._answered = reading, True
            self._changed.notify_all()
            return True

    def wait_asked(self, until: Callable[[], bool], timeout: float | None = None) -> bool:
        """Wait until the run asks or `until()` holds; True when it asks."""
        with self._changed:
            self._changed.wait_for(lambda: self.question is not None or until(), timeout=timeout)
            return self.question is not None

    def wake(self) -> None:
        """Something `wait_asked` checks through `until` changed."""
        with self._changed:
            self._changed.notify_all()
