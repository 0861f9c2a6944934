"""`acts-sql eval bird-critic`: load, select, score, write ``results.jsonl`` and the reports."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from acts_sql.bench.errors import BenchDataError
from acts_sql.bench.loader import KNOWN_SETS, join, load_predictions, load_solutions, load_tasks
from acts_sql.bench.models import EvalMode, ScoredTask, TaskKey, TaskResult
from acts_sql.bench.report import EvalReport, build_report, write_report, write_results
from acts_sql.bench.scorer import EvalOptions, Evaluator, ResultListener
from acts_sql.bench.selection import TaskFilter


class EvalRequest(BaseModel):
    """Everything one evaluation run needs."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    tasks: Path
    gt: Path | None = None
    preds: Path | None = None
    out: Path
    options: EvalOptions = Field(default_factory=EvalOptions)
    filter: TaskFilter = Field(default_factory=TaskFilter)


def load_items(tasks: Path, gt: Path | None, task_filter: TaskFilter) -> list[ScoredTask]:
    """Tasks joined with their solutions, filtered."""
    solutions = load_solutions(gt) if gt else {}
    return task_filter.apply(join(load_tasks(tasks), solutions))


def predictions_for(path: Path, items: list[ScoredTask]) -> dict[TaskKey, list[str]]:
    """The predictions of a file, keyed onto the selected tasks.

    A record carries no set name in the official format: the file's stem names
    it (``pg530.jsonl``, ``open.jsonl``) when that is a known set, and a file of
    any other name (``preds.jsonl``) belongs to the selected tasks' only set.
    """
    sets = {item.task.set for item in items}
    loaded = load_predictions(path)
    loaded_sets = {key[0] for key in loaded}
    anonymous = not loaded_sets & set(KNOWN_SETS)
    if not loaded_sets & sets and len(sets) == 1 and len(loaded_sets) <= 1 and anonymous:
        (only,) = sets
        loaded = {(only, key[1]): p for key, p in loaded.items()}
    elif sets and not loaded_sets & sets:
        raise BenchDataError(
            f"{path}: its predictions name set(s) {sorted(loaded_sets)}, the tasks are of "
            f"{sorted(sets)}; choose one set with --set or name the file after it"
        )
    return {key: p.pred_sqls for key, p in loaded.items()}


def evaluate(
    request: EvalRequest,
    *,
    on_start: Callable[[int], None] | None = None,
    on_result: ResultListener | None = None,
) -> EvalReport:
    """Score the selected tasks and write ``results.jsonl``, ``report.json``, ``report.md``."""
    mode = request.options.mode
    if mode == EvalMode.PRED and request.preds is None:
        raise BenchDataError("--preds is needed to score predictions (or use --mode gold|issue)")
    if request.gt is None:
        raise BenchDataError("--gt (the solutions: a *_solutions.jsonl file or dev/) is needed")
    items = load_items(request.tasks, request.gt, request.filter)
    predictions = predictions_for(request.preds, items) if request.preds else {}
    if request.preds:  # a predictions file covers its own set(s); other sets are left out
        predicted_sets = {key[0] for key in predictions}
        items = [item for item in items if item.task.set in predicted_sets]
    if on_start is not None:
        on_start(len(items))
    request.out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with Evaluator(request.options) as evaluator:
        for dialect in {item.task.dialect for item in items}:
            evaluator.factory(dialect)  # a configured server that does not work: fail now
        results: list[TaskResult] = evaluator.score_all(items, predictions, on_result=on_result)
        engines = evaluator.engines(
            {r.dialect for r in results if r.status.value != "not_evaluable"}
        )
    write_results(request.out / "results.jsonl", results)
    inputs = {"tasks": str(request.tasks), "gt": str(request.gt)}
    if request.preds:
        inputs["preds"] = str(request.preds)
    report = build_report(
        results,
        mode=mode,
        engines=engines,
        inputs=inputs,
        seconds=time.perf_counter() - started,
        today=request.options.today,
    )
    write_report(request.out, report)
    return report
