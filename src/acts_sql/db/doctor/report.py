"""The doctor's report: its rows (`Check`), the report (`DoctorReport`), shared rows."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal, Protocol

from pydantic import BaseModel, Field

from acts_sql.db.result import ExecResult

LEAST_PRIVILEGE = "docs/DATABASES.md#least-privilege-role"
SELECT_ONLY = f"connect as a role with SELECT only: see {LEAST_PRIVILEGE}"


class CheckName(StrEnum):
    """The rows of the report, in order."""

    CONNECTION = "connection"
    SUPERUSER = "superuser"
    CAN_WRITE = "can write"
    READS_FILES = "can read server files"
    GUARD = "read-only guard"
    ENGINE_READ_ONLY = "engine read-only"
    WRITABLE_COPY = "--allow-writes copy"


Level = Literal["ok", "warning", "info"]


class Check(BaseModel):
    """One row: the question, its answer and what it means."""

    name: CheckName
    answer: bool | None = Field(
        None, description="yes/no for the questions that have one (superuser, can write, ...)"
    )
    value: str = Field(description="what was found, in words")
    level: Level = Field("info", description="warning: worth acting on")
    meaning: str = Field("", description="what it means, or what to do")


class DoctorReport(BaseModel):
    """What `acts-sql doctor --db URL` found (``--json`` prints this object)."""

    database: str = Field(description="the URL, without its password")
    dialect: str
    checks: list[Check]

    def check(self, name: CheckName) -> Check:
        """The row `name` (KeyError when the report has none)."""
        for row in self.checks:
            if row.name == name:
                return row
        raise KeyError(name)

    @property
    def warnings(self) -> list[Check]:
        return [row for row in self.checks if row.level == "warning"]


class Session(Protocol):
    """An open executor's read queries (`BaseExecutor.run_internal`)."""

    dialect: str

    def run_internal(self, sql: str, max_rows: int = ...) -> ExecResult: ...

    def close(self) -> None: ...


def yes_no(answer: bool) -> str:
    return "yes" if answer else "no"


def guard_check(dialect: str) -> Check:
    """The row every engine shares: the read-only guard."""
    return Check(
        name=CheckName.GUARD,
        answer=True,
        value="on: every statement is checked before it reaches the database (fail-closed)",
        level="ok",
        meaning="writes, DDL, and admin, file, lock and session functions are blocked; "
        f"--allow-writes runs statements on a private copy, never on the original ({dialect})",
    )


def unanswered(name: CheckName, result: ExecResult) -> Check:
    """A row for a question the server did not answer."""
    return Check(
        name=name,
        value=f"unknown: {result.failure()}",
        level="warning",
        meaning="the server did not answer this question; check the account by hand",
    )
