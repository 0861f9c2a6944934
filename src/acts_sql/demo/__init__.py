"""The demo database and the paper's three example tasks.

``demo_db_path()`` is the shipped SQLite file (built by
``scripts/build_demo_db.py``); ``load_tasks()`` gives the tasks of
``tasks.json``: Figure 1 ('MxN' descriptions), Figure 3 (overlapping
bookings) and the Section 5.4 case study (top-3 by monthly sales), each with
a faulty SQL, the ambiguous phrase, its two interpretations (wrong first)
and the SQL of each.
"""

from __future__ import annotations

import atexit
import json
from contextlib import ExitStack
from functools import cache
from importlib.resources import as_file, files
from pathlib import Path

from pydantic import BaseModel, Field

from acts_sql.errors import ConfigError

DB_FILE = "demo.sqlite"
TASKS_FILE = "tasks.json"

_extracted = ExitStack()
atexit.register(_extracted.close)


class DemoTask(BaseModel):
    """One example task on the demo database."""

    id: str
    title: str
    question: str
    sql: str = Field(description="The faulty SQL to correct.")
    dialect: str = "sqlite"
    ambiguous_phrase: str
    interpretations: list[str] = Field(description="Wrong reading first, right reading second.")
    wrong_sql: str
    right_sql: str


@cache
def demo_db_path() -> Path:
    """The path of the shipped demo database file."""
    resource = files(__name__).joinpath(DB_FILE)
    if isinstance(resource, Path):
        return resource
    return _extracted.enter_context(as_file(resource))  # zipped install: a temp copy


def load_tasks() -> list[DemoTask]:
    """The example tasks, in the order of ``tasks.json``."""
    text = files(__name__).joinpath(TASKS_FILE).read_text(encoding="utf-8")
    return [DemoTask.model_validate(item) for item in json.loads(text)]


def get_task(task_id: str) -> DemoTask:
    """The task with id ``task_id``; ConfigError naming the known ids otherwise."""
    tasks = {task.id: task for task in load_tasks()}
    if task_id not in tasks:
        known = ", ".join(tasks)
        raise ConfigError(f"unknown demo task {task_id!r} (known: {known})", task_id=task_id)
    return tasks[task_id]


__all__ = ["DemoTask", "demo_db_path", "get_task", "load_tasks"]
