"""What the staged methods (`dac`, `maplerepair`) share: their candidates and their outcome.

Both rewrite the user's SQL step by step and end with one statement. Each
statement they execute on the way is a candidate of the run (so `bench
candidates` scores all of them); the final one is returned, accepted when it
runs and differs from the user's SQL, and otherwise the user's SQL comes back
unchanged, not accepted (`SearchOutcome.returns_original`).
"""

from __future__ import annotations

from acts_sql.db.result import ExecResult
from acts_sql.engine.candidates import Candidate, CandidateBook
from acts_sql.engine.events import CandidateData
from acts_sql.engine.fingerprint import result_shape
from acts_sql.engine.search import SearchOutcome
from acts_sql.engine.trace import Trace
from acts_sql.sql.query_text import normalize_sql


class StagedRun:
    """The candidates of one staged run, in the order they were executed."""

    def __init__(self, node: str, dialect: str, original_sql: str, trace: Trace) -> None:
        self.node = node
        self.dialect = dialect
        self.original_sql = original_sql
        self.trace = trace
        self.book = CandidateBook(dialect)

    def record(self, sql: str, result: ExecResult, origin: str) -> Candidate:
        """`sql` as a candidate (a repeat counts as a vote), with its trace event."""
        known = self.book.known(sql)
        if known is not None:
            self.book.add_vote(known)
            candidate = known
        else:
            shape = result_shape(sql, result, self.dialect)
            candidate = self.book.add(self.node, sql, result, shape, origin=origin)
        self.trace.emit(
            CandidateData(
                sql=sql,
                status=candidate.result.status,
                candidate=candidate.id,
                origin=origin,
                duplicate=known is not None,
            ),
            node=self.node,
            summary=candidate.result.summary(max_rows=3),
        )
        return candidate

    def finish(self, sql: str, result: ExecResult, origin: str, why: str) -> SearchOutcome:
        """The outcome for the final statement (see the module doc)."""
        unchanged = normalize_sql(sql, self.dialect) == normalize_sql(
            self.original_sql, self.dialect
        )
        if unchanged:
            # a rewrite that hands back the user's SQL is not "nothing to correct"
            stop = (
                f"nothing to correct: {why}"
                if origin == "original"
                else f"{why}, and the result is the user's SQL unchanged: not accepted"
            )
            return SearchOutcome(
                returns_original=True, stop_reason=stop, candidates=list(self.book.candidates)
            )
        candidate = self.book.known(sql) or self.record(sql, result, origin)
        if not result.ok:
            return SearchOutcome(
                best=candidate,
                stop_reason=f"the corrected SQL does not execute: {result.error}",
                candidates=list(self.book.candidates),
            )
        self.book.accept(candidate, why)
        return SearchOutcome(
            accepted=candidate,
            best=candidate,
            stop_reason=f"accepted ({why})",
            candidates=list(self.book.candidates),
        )
