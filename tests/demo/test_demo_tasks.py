"""The three example tasks: every SQL runs, and the readings really differ."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

import pytest

from acts_sql.db.connect import open_database
from acts_sql.db.executor import Executor
from acts_sql.db.result import ExecResult
from acts_sql.demo import DemoTask, demo_db_path, get_task, load_tasks
from acts_sql.errors import ConfigError

TASK_IDS = ["figure1", "figure3", "case_5_4"]


@pytest.fixture(scope="module")
def demo() -> Iterator[Executor]:
    executor = open_database(str(demo_db_path()))
    yield executor
    executor.close()


def _run(demo: Executor, sql: str) -> ExecResult:
    result = demo.execute(sql)
    assert result.ok, f"{result.error}\n{sql}"
    return result


def _rows(result: ExecResult) -> list[list[object]]:
    return sorted(result.rows, key=repr)


def test_task_list() -> None:
    tasks = load_tasks()
    assert [t.id for t in tasks] == TASK_IDS
    for task in tasks:
        assert task.dialect == "sqlite"
        assert len(task.interpretations) == 2
        assert task.ambiguous_phrase.lower() in task.question.lower()
        assert task.wrong_sql.strip() and task.right_sql.strip() and task.sql.strip()


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_every_sql_runs(demo: Executor, task_id: str) -> None:
    task = get_task(task_id)
    for sql in (task.sql, task.wrong_sql, task.right_sql):
        assert _run(demo, sql).row_count > 0


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_readings_differ(demo: Executor, task_id: str) -> None:
    task = get_task(task_id)
    right = _rows(_run(demo, task.right_sql))
    assert _rows(_run(demo, task.wrong_sql)) != right
    assert _rows(_run(demo, task.sql)) != right


def test_figure1_exact_match_finds_nothing(demo: Executor) -> None:
    task = get_task("figure1")
    assert _run(demo, task.sql).rows == [[None]]
    total = _run(demo, task.right_sql).rows[0][0]
    assert isinstance(total, int) and total > 0


def test_figure3_counts_rooms_without_overlaps(demo: Executor) -> None:
    task = get_task("figure3")
    wrong = {tuple(r) for r in _run(demo, task.wrong_sql).rows}
    right = {tuple(r) for r in _run(demo, task.right_sql).rows}
    assert right and right < wrong  # every overlapping room has >1 booking, not vice versa


def _top3(result: ExecResult) -> dict[str, set[str]]:
    cols = result.columns
    sets: dict[str, set[str]] = defaultdict(set)
    for row in result.rows:
        record = dict(zip(cols, row, strict=True))
        sets[str(record["category"])].add(str(record["name"]))
    return dict(sets)


def test_case_5_4_top3_sets_differ(demo: Executor) -> None:
    task = get_task("case_5_4")
    annual = _top3(_run(demo, task.wrong_sql))
    monthly = _top3(_run(demo, task.right_sql))
    assert annual.keys() == monthly.keys() and len(annual) >= 3
    assert all(len(names) == 3 for names in [*annual.values(), *monthly.values()])
    assert any(annual[c] != monthly[c] for c in annual)


def test_unknown_task() -> None:
    with pytest.raises(ConfigError, match="figure1"):
        get_task("nope")


def test_task_model_roundtrip() -> None:
    task = load_tasks()[0]
    assert DemoTask.model_validate(task.model_dump()) == task
