"""Guards on the accepted flag: what the engine refuses whatever the judge says.

Users act on ``accepted: true``, and a weak judge accepts almost anything, so
the engine refuses two kinds of candidate before any judge sees them:

- the user's own SQL: a candidate whose canonical form (``normalize_sql``:
  whitespace, case, comments and formatting ignored) equals the user's SQL
  changes nothing, and the user came because it is wrong;
- the user's own rows: when the issue complains about the result, a candidate
  that returns exactly the rows of the user's SQL (as a multiset) cannot be
  the fix; nor one that returns them less columns that hold one value on
  every row (a flag such as `is_a_match = 0`: in a kept acts run with the
  0.5B, the one acceptance that stood dropped that column and kept the
  user's rows). For issues about speed ("slow", "optimise", "index", ...),
  the same rows are what is expected and the judge decides
  (``expects_same_rows``).

In text-to-SQL mode (no SQL given, `engine/runner.trust_context`) the
initial SQL is the model's own first answer, not SQL a user says is wrong:
neither refusal applies, and a candidate repeating it is judged like any other.

A refused candidate keeps its place in the book (it may still be returned,
never as accepted) and the trace says why it was refused.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from acts_sql.engine.candidates import Candidate
from acts_sql.engine.events import RefusalData
from acts_sql.engine.fingerprint import ResultShape, same_rows, same_rows_less_constant_columns
from acts_sql.engine.trace import Trace
from acts_sql.sql.query_text import normalize_sql

SAME_SQL = "the same SQL as the user's (formatting aside): it changes nothing"
SAME_ROWS = (
    "returns exactly the rows of the user's SQL, which the issue says do not do what it asks"
)
SAME_ROWS_LESS_CONSTANT = (
    "returns the rows of the user's SQL less column(s) that hold one value on every row, "
    "which the issue says do not do what it asks"
)

_PERFORMANCE = re.compile(
    r"\b(slow(er|ly|ness)?|performance|perform(s|ing)?\s+(badly|poorly|better)|faster|speed(\s*up)?"
    r"|optimi[sz](e|ed|ing|ation)|efficien(t|cy|tly)|takes?\s+(too\s+)?long|long[-\s]running"
    r"|execution\s+plan|query\s+plan|explain\s+analy[sz]e|full\s+(table\s+)?scan"
    r"|(create|add|use|using|uses|missing)\s+(an?\s+|the\s+)?index|indexes|indexing"
    r"|time[sd]?\s*out|expensive\s+(query|join|scan))\b",
    re.IGNORECASE,
)


def expects_same_rows(issue: str) -> bool:
    """Whether the issue is about how the SQL runs, not what it returns."""
    return bool(_PERFORMANCE.search(issue or ""))


class TrustContext(BaseModel):
    """What refusals compare against: the user's SQL and its result."""

    dialect: str
    original_key: str
    original_shape: ResultShape | None = None
    original_runs: bool = True
    same_rows_expected: bool = False
    generated: bool = False
    """Text-to-SQL mode: the initial SQL is the model's own first answer, not the user's."""

    @classmethod
    def build(
        cls,
        dialect: str,
        original_sql: str,
        original_shape: ResultShape | None,
        same_rows_expected: bool,
        original_runs: bool = True,
        generated: bool = False,
    ) -> TrustContext:
        return cls(
            dialect=dialect,
            original_key=normalize_sql(original_sql, dialect) if original_sql.strip() else "",
            original_shape=original_shape,
            original_runs=original_runs,
            same_rows_expected=same_rows_expected,
            generated=generated,
        )

    def is_original(self, sql: str) -> bool:
        return bool(self.original_key) and normalize_sql(sql, self.dialect) == self.original_key

    def refusal(self, sql: str, shape: ResultShape | None) -> str | None:
        """Why this candidate (which ran) may never be accepted, or None.

        When the user's SQL does not run, a candidate that runs is not "the
        same SQL" even if its canonical form matches (a lenient parser can read
        past the very error that was fixed).
        """
        if self.original_runs and self.is_original(sql):
            return SAME_SQL
        if self.same_rows_expected:
            return None
        if same_rows(shape, self.original_shape):
            return SAME_ROWS
        if same_rows_less_constant_columns(shape, self.original_shape):
            return SAME_ROWS_LESS_CONSTANT
        return None


def emit_refusal(trace: Trace, node: str | None, candidate: Candidate) -> None:
    """The `refusal` event of a candidate set aside (refused, or rejected for a known result)."""
    trace.emit(
        RefusalData(candidate=candidate.id, verdict=candidate.verdict, sql=candidate.sql),
        node=node,
        summary=candidate.reason,
    )
