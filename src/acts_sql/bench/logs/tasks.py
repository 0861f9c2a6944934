"""The 60 text-to-query tasks of `bench logs` and their gold results.

``data/tasks.json``: one object per task: ``id``, ``category`` (filter,
time_bucket, top_k, percentile, join, window, ambiguous), ``question``,
``gold`` (PRQL), ``ordered`` (whether row order is part of the answer) and,
for the ambiguous ones, ``ambiguity`` (the phrase and the reading the gold
takes, grounded in the schema or the data).

``data/gold_small.json``: the gold results on the small database of the
default seed, as `scoring.canonical_rows` writes them; a test checks that the
gold queries still produce them. For other sizes and seeds the gold results
are computed by running the gold queries (`gold_results`).
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Literal

from pydantic import BaseModel

from acts_sql.bench.logs.scoring import GoldResult, canonical_rows
from acts_sql.db.executor import Executor
from acts_sql.errors import ConfigError

SMALL_CHECKSUM = "6d37dcb9af11d2240f0f78f7803f37a9cab6fcccd26f6881582b866f1beee4e1"
"""`generator.checksum` of the small database of the default seed: the data
``gold_small.json`` was computed on."""

Category = Literal["filter", "time_bucket", "top_k", "percentile", "join", "window", "ambiguous"]
_DATA = "acts_sql.bench.logs"


class LogTask(BaseModel):
    id: str
    category: Category
    question: str
    gold: str
    """The gold query, in PRQL."""
    ordered: bool = False
    ambiguity: str | None = None


@cache
def load_tasks() -> tuple[LogTask, ...]:
    text = resources.files(_DATA).joinpath("data/tasks.json").read_text("utf-8")
    return tuple(LogTask.model_validate(item) for item in json.loads(text))


def select_tasks(ids: list[str] | None = None, limit: int | None = None) -> list[LogTask]:
    """The tasks named by `ids` (all when empty), at most `limit`; ConfigError for an unknown id."""
    tasks = list(load_tasks())
    if ids:
        known = {t.id: t for t in tasks}
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise ConfigError(f"unknown task id(s): {', '.join(unknown)}; ids are L01 to L60")
        tasks = [known[i] for i in ids]
    return tasks if limit is None else tasks[:limit]


def stored_gold_small() -> dict[str, GoldResult]:
    """The gold results stored for the small database of the default seed."""
    text = resources.files(_DATA).joinpath("data/gold_small.json").read_text("utf-8")
    return {key: GoldResult.model_validate(value) for key, value in json.loads(text).items()}


def gold_results(executor: Executor, tasks: list[LogTask]) -> dict[str, GoldResult]:
    """Each task's gold result on the database behind `executor` (a PRQL executor);
    ConfigError when a gold query does not run (the data is not what the tasks expect)."""
    found: dict[str, GoldResult] = {}
    for task in tasks:
        result = executor.execute(task.gold)
        if not result.ok or result.truncated:
            raise ConfigError(f"gold query of {task.id} does not run here: {result.failure()}")
        found[task.id] = GoldResult(
            columns=result.columns, rows=canonical_rows(result.rows), ordered=task.ordered
        )
    return found
