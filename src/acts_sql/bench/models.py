"""BIRD-CRITIC records at the harness's boundaries: tasks, solutions, predictions, verdicts.

An ``instance_id`` names different tasks in different sets (``PostgreSQL_5``
of open570 is not ``PostgreSQL_5`` of pg530), so every record is keyed by
``(set, instance_id)``; ids are compared as strings (flash uses integers).
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from acts_sql.bench import python_ast

TaskKey = tuple[str, str]

_SPLIT = re.compile(r"\[split\]\s*")


def split_sql_field(value: Any) -> list[str]:
    """A SQL field as a list of statements, the way the official loader reads it.

    A list is kept as it is; a string holding a Python list literal (the
    example predictions) is parsed with ``ast.literal_eval``; any other string
    is split on ``[split]``; empty or missing is ``[]``.
    """
    if value is None or value == "":
        return []
    if isinstance(value, list | tuple):
        return [str(v) for v in value]
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                parsed = python_ast.literal(text)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                parsed = None
            if isinstance(parsed, list | tuple):
                return [str(v) for v in parsed]
        return [s.strip() for s in _SPLIT.split(value) if s.strip()]
    raise ValueError(f"expected a list of SQL statements or a string, got {type(value).__name__}")


class Dialect(StrEnum):
    """The dialect names used in the task files."""

    POSTGRESQL = "PostgreSQL"
    MYSQL = "MySQL"
    SQLITE = "SQLite"
    SQLSERVER = "SQLServer"
    ORACLE = "Oracle"


class Status(StrEnum):
    """One task's verdict. Only ``passed`` counts as solved."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    TIMEOUT = "timeout"
    NOT_EVALUABLE = "not_evaluable"


class EvalMode(StrEnum):
    """What is scored: predictions, the solutions (must pass) or the issue SQL (should fail)."""

    PRED = "pred"
    GOLD = "gold"
    ISSUE = "issue"


class Task(BaseModel):
    """One public task (no solution)."""

    model_config = ConfigDict(extra="ignore")

    set: str
    instance_id: int | str
    dialect: str
    db_id: str
    query: str = ""
    issue_sql: list[str] = Field(default_factory=list)
    preprocess_sql: list[str] = Field(default_factory=list)
    clean_up_sql: list[str] = Field(default_factory=list)
    category: str = "Query"
    efficiency: bool = False
    version: str = ""

    @field_validator("issue_sql", "preprocess_sql", "clean_up_sql", mode="before")
    @classmethod
    def _statements(cls, value: Any) -> list[str]:
        return split_sql_field(value)

    @property
    def key(self) -> TaskKey:
        return (self.set, str(self.instance_id))

    @property
    def label(self) -> str:
        return f"{self.set}/{self.instance_id}"


class Solution(BaseModel):
    """The solution and test cases of one task (development split only)."""

    model_config = ConfigDict(extra="ignore")

    set: str
    instance_id: int | str
    sol_sql: list[str] = Field(default_factory=list)
    test_cases: list[str] = Field(default_factory=list)
    conditions: dict[str, Any] = Field(default_factory=dict)

    @field_validator("sol_sql", mode="before")
    @classmethod
    def _statements(cls, value: Any) -> list[str]:
        return split_sql_field(value)

    @property
    def key(self) -> TaskKey:
        return (self.set, str(self.instance_id))


class Prediction(BaseModel):
    """One predicted answer, in the official format: ``{"instance_id", "pred_sqls"}``."""

    model_config = ConfigDict(extra="ignore")

    instance_id: int | str
    pred_sqls: list[str] = Field(default_factory=list)
    set: str | None = None

    @field_validator("pred_sqls", mode="before")
    @classmethod
    def _statements(cls, value: Any) -> list[str]:
        return split_sql_field(value)


class ScoredTask(BaseModel):
    """A task joined with its solution: what the evaluator needs."""

    task: Task
    solution: Solution | None = None

    @property
    def key(self) -> TaskKey:
        return self.task.key


class TaskResult(BaseModel):
    """One line of ``results.jsonl``."""

    instance_id: int | str
    set: str
    dialect: str
    category: str
    status: Status
    reason: str = ""
    tests_passed: int = 0
    tests_total: int = 0
    failed_tests: list[str] = Field(default_factory=list)
    seconds: float = 0.0
    absent_table: str | None = None
    """Set when the SQL under test failed on a table the task does not create: it was
    written for the original database, which the official evaluator has and this one lacks."""
    clock: list[str] = Field(default_factory=list)
    """What reads the current date or time in the task's SQL or test code (``bench/clock.py``):
    the verdict can change from one day to the next."""
    clock_fixed: bool = False
    """``--today`` fixed every one of those clock readers."""

    @property
    def key(self) -> TaskKey:
        return (self.set, str(self.instance_id))

    @property
    def passed(self) -> bool:
        return self.status == Status.PASSED
