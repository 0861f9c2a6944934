"""What the evaluator hands to the subprocess that scores one task, and what comes back.

A job is plain data (it crosses a process boundary as JSON): where the fresh
database is, the statements of each phase and the arguments each test case
receives. The parent decides everything that depends on the mode and on the
official rules (efficiency swap, SQLite's issue check); the subprocess only
runs what it is given.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

PhaseName = Literal["issue_check", "main"]


class DatabaseTarget(BaseModel):
    """The fresh database a job runs on."""

    dialect: Literal["PostgreSQL", "MySQL", "SQLite"]
    name: str
    """The name test cases receive (``db_name``; for SQLite the file path, ``db_path``)."""
    server_url: str | None = Field(default=None, repr=False)
    """PostgreSQL/MySQL: the server (its own database part is ignored)."""


class Phase(BaseModel):
    """One pass: fresh database, ``preprocess_sql``, ``statements``, then the test cases."""

    name: PhaseName = "main"
    statements: list[str]
    test_pred_sqls: list[str]
    """What a test case receives as ``pred_sqls`` (the issue SQL for efficiency tasks)."""
    test_sol_sqls: list[str]
    """What a test case receives as ``sol_sqls`` (the prediction for efficiency tasks)."""
    clean_up: bool = True


class TaskJob(BaseModel):
    """Everything needed to score one task in a subprocess."""

    label: str
    target: DatabaseTarget
    preprocess_sql: list[str] = Field(default_factory=list)
    clean_up_sql: list[str] = Field(default_factory=list)
    test_cases: list[str] = Field(default_factory=list)
    conditions: dict[str, Any] = Field(default_factory=dict)
    phases: list[Phase]
    test_timeout_s: float = 120.0
    now: datetime | None = None
    """``--today``: the instant the clock shows (SQLite and MySQL; PostgreSQL keeps its own)."""


class CaseOutcome(BaseModel):
    """One test case's verdict."""

    index: int
    passed: bool
    message: str = ""
    timed_out: bool = False


class PhaseOutcome(BaseModel):
    """What one phase gave: the official flags and every test case's verdict."""

    name: PhaseName
    execution_error: bool = False
    timeout: bool = False
    messages: list[str] = Field(default_factory=list)
    tests: list[CaseOutcome] = Field(default_factory=list)
    preprocess_missing_table: str | None = None
    preprocess_missing_extension: str | None = None
    missing_extension: str | None = None
    missing_table: str | None = None
    """A table the statements under test use and nothing created (the original database's)."""
    preprocess_errors: list[str] = Field(default_factory=list)

    @property
    def failed_tests(self) -> list[CaseOutcome]:
        return [t for t in self.tests if not t.passed]

    @property
    def passed(self) -> bool:
        """The official success rule: the statements ran and no test case failed."""
        return not (self.execution_error or self.timeout or self.failed_tests)


class JobOutcome(BaseModel):
    """All phases of one job, or why the job could not run."""

    phases: list[PhaseOutcome] = Field(default_factory=list)
    crashed: str | None = None
    """An error of the evaluator itself (not of the SQL under test)."""

    def phase(self, name: PhaseName) -> PhaseOutcome | None:
        return next((p for p in self.phases if p.name == name), None)
