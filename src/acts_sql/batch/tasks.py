"""The batch input: ``tasks.jsonl``, one correction task per line.

    {"id": "q17", "database": "shop", "question": "...", "sql": "SELECT ...", "dialect": "mysql"}

``id`` (a string or a number) and ``database`` (a name from ``--databases``,
a URL or a file path) are required; ``question``, ``sql`` (without it or null:
text-to-SQL mode) and ``dialect`` are optional, and other keys are ignored. A
line that cannot be a task (not JSON, not an object, a missing or empty field,
SQL that is empty or only whitespace, a question or SQL above the input limits
of `acts_sql.engine.inputs`, neither question nor SQL, a database that does not
resolve, an id seen on an earlier line) is a `BadLine` with its line number;
reading goes on. A UTF-8 byte-order mark at the start of the file is dropped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from acts_sql.batch.databases import DatabaseCatalog
from acts_sql.engine.inputs import MAX_QUESTION_CHARS, MAX_SQL_CHARS
from acts_sql.errors import ActsSqlError, ConfigError


class BatchTask(BaseModel):
    """One line of the input, as written."""

    model_config = ConfigDict(extra="ignore")

    id: str = Field(min_length=1)
    database: str = Field(min_length=1)
    question: str = Field("", max_length=MAX_QUESTION_CHARS)
    sql: str | None = Field(None, max_length=MAX_SQL_CHARS)
    dialect: str | None = None

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        return value.strip() if isinstance(value, str) else value

    @field_validator("sql")
    @classmethod
    def _sql_not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("empty SQL: give a statement, or leave sql out for text-to-SQL mode")
        return value


class BatchJob(BaseModel):
    """A task ready to run: its line and the URL its database resolved to."""

    line: int
    task: BatchTask
    url: str = Field(repr=False)


class BadLine(BaseModel):
    """A line that is not a task, and why."""

    line: int
    error: str
    id: str | None = None


def read_jobs(path: Path, catalog: DatabaseCatalog) -> Iterator[BatchJob | BadLine]:
    """Every non-blank line of `path`, as a job or a bad line, lazily."""
    seen: dict[str, int] = {}
    base = Path.cwd()
    try:
        handle = path.open(encoding="utf-8-sig", errors="replace")  # -sig: drop a BOM
    except OSError as exc:
        raise ConfigError(f"--in {path}: cannot read it ({exc.strerror or exc})") from None
    with handle:
        for number, text in enumerate(handle, start=1):
            if text.strip():
                yield _job(number, text, catalog, base, seen)


def count_lines(path: Path) -> int:
    """Non-blank lines of `path` (the progress bar's total)."""
    try:
        with path.open("rb") as handle:
            return sum(1 for line in handle if line.strip())
    except OSError as exc:
        raise ConfigError(f"--in {path}: cannot read it ({exc.strerror or exc})") from None


def _job(
    number: int, text: str, catalog: DatabaseCatalog, base: Path, seen: dict[str, int]
) -> BatchJob | BadLine:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return BadLine(line=number, error=f"not JSON ({exc.msg}, column {exc.colno})")
    if not isinstance(data, dict):
        return BadLine(line=number, error="expected a JSON object")
    try:
        task = BatchTask.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "line"
        return BadLine(line=number, error=f"{where}: {first['msg']}", id=_raw_id(data))
    if not task.question.strip() and not (task.sql or "").strip():
        return BadLine(line=number, error="neither a question nor SQL: nothing to do", id=task.id)
    if task.id in seen:
        repeat = f"id {task.id!r} repeats line {seen[task.id]}"
        return BadLine(line=number, error=repeat, id=task.id)
    seen[task.id] = number
    try:
        url = catalog.resolve(task.database, base)
    except ActsSqlError as exc:
        return BadLine(line=number, error=str(exc), id=task.id)
    return BatchJob(line=number, task=task, url=url)


def _raw_id(data: dict[str, Any]) -> str | None:
    value = data.get("id")
    return str(value) if isinstance(value, str | int) and str(value).strip() else None


__all__ = ["BadLine", "BatchJob", "BatchTask", "count_lines", "read_jobs"]
