"""`acts-sql bench bird-critic`: a correction method over benchmark tasks, scored as it goes.

Per task: prepare the database the evaluator would build (`prepare`), open an
executor on a throw-away copy of it, run the method (`acts_sql.api.correct`),
drop the copy and the database, score the prediction with the evaluator,
and append the prediction (official format) and a record (verdict, LLM calls,
tokens, seconds, trace file) to the output directory. A run is resumable:
tasks that already have a record with a prediction are not run again.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from acts_sql.api import correct
from acts_sql.bench.errors import BenchDataError, DatabaseSetupError
from acts_sql.bench.evaluability import check_task
from acts_sql.bench.evaluate import load_items
from acts_sql.bench.loader import read_jsonl
from acts_sql.bench.machine import machine_label
from acts_sql.bench.models import ScoredTask, Status, Task, TaskKey, TaskResult
from acts_sql.bench.prepare import open_agent_executor, prepare_database
from acts_sql.bench.report import BenchReport, build_bench_report, write_report, write_results
from acts_sql.bench.scorer import EvalOptions, Evaluator
from acts_sql.bench.selection import TaskFilter
from acts_sql.db.executor import Executor
from acts_sql.engine.options import CorrectionOptions, Method
from acts_sql.engine.result import CorrectionResult
from acts_sql.errors import ActsSqlError
from acts_sql.llm.base import LLMBackend
from acts_sql.llm.spec import parse_llm_spec
from acts_sql.scale import ExecutorKind, ThreadPool, make_pool
from acts_sql.scale.base import Done, TaskPool, WorkerSpec

RECORDS = "records.jsonl"
PREDICTIONS = "preds.jsonl"
TRACES = "traces"


SAMPLING = ("candidates", "temperature")


class MethodSpec(BaseModel):
    """The method under test (its options: switches, ablations, budgets) and the LLM."""

    model_config = ConfigDict(frozen=True)

    llm: str | None = None
    options: CorrectionOptions = Field(default_factory=CorrectionOptions)

    @property
    def method(self) -> Method:
        return self.options.method

    def sampling(self) -> dict[str, Any]:
        """The candidates and temperature the run was given (those left out are the
        method's defaults): what records and reports name, and a resumed run must match."""
        given = self.options.model_fields_set
        return {k: getattr(self.options, k) for k in SAMPLING if k in given}

    @property
    def label(self) -> str:
        """The name in reports: the method, plus its ablations (``acts-no-exec``)."""
        name = self.options.method.value
        if not self.options.execution_tools:
            name += "-no-exec"
        if not self.options.ambiguity_detection:
            name += "-no-ambiguity"
        if not self.options.evidence_gate:
            name += "-no-evidence"
        if not self.options.scaled_budget:
            name += "-full-budget"
        if not self.options.schema_constraint:
            name += "-free-names"
        return name


class BenchRecord(BaseModel):
    """One line of ``records.jsonl``: a task's prediction, verdict and cost."""

    instance_id: int | str
    set: str
    dialect: str
    category: str
    method: str
    llm: str = ""
    candidates: int | None = None
    """The run's `MethodSpec.candidates` (None: the method's default)."""
    temperature: float | None = None
    """The run's `MethodSpec.temperature` (None: the method's default)."""
    pred_sqls: list[str] = Field(default_factory=list)
    ran: bool = False
    """Whether the method ran (False: not evaluable here, or the harness failed first)."""
    accepted: bool = False
    stop_reason: str = ""
    status: Status
    reason: str = ""
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    eval_seconds: float = 0.0
    trace_file: str | None = None
    clock: list[str] = Field(default_factory=list)
    """What reads the clock in the task's SQL or tests (`TaskResult.clock`)."""
    clock_fixed: bool = False
    machine: str = ""
    """The CPU the task ran on (`bench.machine.machine_label`; empty in records written
    before it was kept): seconds from different machines do not compare."""

    @property
    def key(self) -> TaskKey:
        return (self.set, str(self.instance_id))

    def result(self) -> TaskResult:
        return TaskResult(
            instance_id=self.instance_id,
            set=self.set,
            dialect=self.dialect,
            category=self.category,
            status=self.status,
            reason=self.reason,
            seconds=self.eval_seconds,
            clock=self.clock,
            clock_fixed=self.clock_fixed,
        )


class BenchRequest(BaseModel):
    """Everything one benchmark run needs."""

    tasks: Path
    gt: Path | None = None
    out: Path
    method: MethodSpec = Field(default_factory=MethodSpec)
    filter: TaskFilter = Field(default_factory=TaskFilter)
    options: EvalOptions = Field(default_factory=EvalOptions)
    evaluable_only: bool = True
    """Run the method only on tasks that can be scored here (others are recorded as such)."""
    executor: ExecutorKind | None = None
    """None or local: the tasks run in threads of this process (`options.workers` of them,
    sharing one backend and one evaluator); ray: on `options.workers` Ray actors, each
    with its own backend and evaluator (docs/SCALE.md)."""
    ray_address: str | None = None
    llm_options: dict[str, str | float] = Field(default_factory=dict, repr=False, exclude=True)
    """`--base-url` / `--api-key` / `--llm-timeout`, for the backends Ray actors build
    (never written)."""


RecordListener = Callable[[BenchRecord], None]


class BenchRun:
    """One run: the tasks, the backend, the evaluator and the output files."""

    def __init__(self, request: BenchRequest, backend: LLMBackend | None = None) -> None:
        self.request = request
        self.spec = request.method
        self.backend = backend or parse_llm_spec(self.spec.llm)
        self.items = load_items(request.tasks, request.gt, request.filter)
        self.out = request.out
        self._lock = threading.Lock()
        self.multi_set = len({i.task.set for i in self.items}) > 1

    # -- files -----------------------------------------------------------------------------

    def previous_records(self) -> dict[TaskKey, BenchRecord]:
        """Records of an earlier run into the same directory (the method must match)."""
        path = self.out / RECORDS
        if not path.exists():
            return {}
        records: dict[TaskKey, BenchRecord] = {}
        for _, data in read_jsonl(path):
            record = BenchRecord.model_validate(data)
            if record.method != self.spec.label:
                raise BenchDataError(
                    f"{path} holds a run of method {record.method!r}, not {self.spec.label!r}: "
                    "use another --out directory"
                )
            mine = self.spec.sampling()
            if (record.candidates, record.temperature) != tuple(map(mine.get, SAMPLING)):
                raise BenchDataError(
                    f"{path} holds a run with candidates={record.candidates}, "
                    f"temperature={record.temperature}, not candidates={mine.get('candidates')}, "
                    f"temperature={mine.get('temperature')}: use another --out directory"
                )
            if record.ran:
                records[record.key] = record
        return records

    def _append(self, record: BenchRecord) -> None:
        with self._lock:
            with (self.out / RECORDS).open("a", encoding="utf-8") as handle:
                handle.write(record.model_dump_json() + "\n")
            if record.ran:
                with (self.out / PREDICTIONS).open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(self._official(record), ensure_ascii=False) + "\n")

    def _official(self, record: BenchRecord) -> dict[str, Any]:
        line: dict[str, Any] = {"instance_id": record.instance_id, "pred_sqls": record.pred_sqls}
        if self.multi_set:
            line["set"] = record.set
        return line

    def _write_trace(self, item: ScoredTask, payload: dict[str, Any]) -> str:
        folder = self.out / TRACES / item.task.set
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{item.task.instance_id}.json"
        path.write_text(json.dumps(payload, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        return str(path.relative_to(self.out))

    # -- the run ---------------------------------------------------------------------------

    def run(
        self,
        on_record: RecordListener | None = None,
        on_start: Callable[[int], None] | None = None,
    ) -> BenchReport:
        """Run every pending task, then write results.jsonl and the reports."""
        if on_start is not None:
            on_start(len(self.items))
        self.out.mkdir(parents=True, exist_ok=True)
        done = self.previous_records()
        pending = {_key_text(item): item for item in self.items if item.key not in done}
        records: dict[TaskKey, BenchRecord] = dict(done)
        started = time.perf_counter()
        for item in [i for i in self.items if i.key in done]:
            if on_record is not None:
                on_record(done[item.key])

        def arrived(outcome: Done[Any]) -> None:
            record = self._arrived(pending[outcome.key], outcome)
            records[record.key] = record
            if record.ran:
                self._append(record)
            if on_record is not None:
                on_record(record)

        with Evaluator(self.request.options) as evaluator:
            evaluator.check_servers(item.task.dialect for item in pending.values())
            pool, spec = self._pool(evaluator)
            pool.run(spec, pending.items(), arrived)
            engines = evaluator.engines({r.dialect for r in records.values() if r.ran})
        ordered = [records[item.key] for item in self.items if item.key in records]
        selected = {item.key for item in self.items}
        others = [record for key, record in done.items() if key not in selected]
        self._rewrite(ordered + others)
        report = build_bench_report(
            ordered,
            method=self.spec.label,
            llm=self.backend.name,
            engines=engines,
            inputs={
                "tasks": str(self.request.tasks),
                "gt": str(self.request.gt),
                **{name: str(value) for name, value in self.spec.sampling().items()},
            },
            seconds=time.perf_counter() - started,
            today=self.request.options.today,
        )
        write_results(self.out / "results.jsonl", [r.result() for r in ordered])
        write_report(self.out, report)
        return report

    def _pool(self, evaluator: Evaluator) -> tuple[TaskPool, WorkerSpec]:
        """Threads sharing this run's backend and evaluator, or Ray actors with their own."""
        workers = self.request.options.workers
        if self.request.executor == ExecutorKind.RAY:
            pool = make_pool(ExecutorKind.RAY, workers, ray_address=self.request.ray_address)
            return pool, ActorWorkers(request=self.request)
        return ThreadPool(workers), SharedWorkers(self.request, self.backend, evaluator)

    def _arrived(self, item: ScoredTask, outcome: Done[Any]) -> BenchRecord:
        """A task's record from its worker's outcome (a crash after the retry: an error)."""
        if not isinstance(outcome.value, BenchOutcome):
            failed = f"bench: the method failed: {outcome.error}"
            return task_record(self.request, self.backend.name, item, Status.ERROR, failed)
        record = outcome.value.record
        if outcome.value.trace is not None:
            record.trace_file = self._write_trace(item, outcome.value.trace)
        return record

    def _rewrite(self, ordered: list[BenchRecord]) -> None:
        """records.jsonl and preds.jsonl, one line per task: this run's tasks in task order,
        then those an earlier run into the directory recorded and this one did not select
        (a run of fewer tasks must not drop them)."""
        with (self.out / RECORDS).open("w", encoding="utf-8") as handle:
            for record in ordered:
                if record.ran:
                    handle.write(record.model_dump_json() + "\n")
        with (self.out / PREDICTIONS).open("w", encoding="utf-8") as handle:
            for record in ordered:
                if record.ran:
                    handle.write(json.dumps(self._official(record), ensure_ascii=False) + "\n")


def _key_text(item: ScoredTask) -> str:
    return "/".join(item.key)


def task_record(
    request: BenchRequest,
    llm: str,
    item: ScoredTask,
    status: Status,
    reason: str,
    **extra: Any,
) -> BenchRecord:
    """A task's record with the run's method, LLM and sampling options."""
    task, spec = item.task, request.method
    sampling = spec.sampling()
    return BenchRecord(
        instance_id=task.instance_id,
        set=task.set,
        dialect=task.dialect,
        category=task.category,
        method=spec.label,
        llm=llm,
        candidates=sampling.get("candidates"),
        temperature=sampling.get("temperature"),
        status=status,
        reason=reason,
        machine=machine_label(),
        **extra,
    )


class BenchOutcome(BaseModel):
    """What a worker sends back for one task: its record, and the result for the trace file."""

    record: BenchRecord
    trace: dict[str, Any] | None = None


class MethodWorker:
    """Runs the method on one task after the other and scores each prediction."""

    def __init__(
        self,
        request: BenchRequest,
        backend: LLMBackend,
        evaluator: Evaluator,
        *,
        owns_evaluator: bool = False,
    ) -> None:
        self.request, self.spec = request, request.method
        self.backend, self.evaluator = backend, evaluator
        self._owns_evaluator = owns_evaluator

    def close(self) -> None:
        if self._owns_evaluator:
            self.evaluator.close()

    def _record(self, item: ScoredTask, status: Status, reason: str, **extra: Any) -> BenchOutcome:
        record = task_record(self.request, self.backend.name, item, status, reason, **extra)
        return BenchOutcome(record=record)

    def run(self, item: ScoredTask) -> BenchOutcome:
        """Run the method on one task and score its prediction."""
        task = item.task
        if self.request.evaluable_only:
            if self.request.gt is not None and item.solution is None:
                return self._record(item, Status.NOT_EVALUABLE, "no solution for this task")
            verdict = check_task(item)
            if not verdict.evaluable:
                return self._record(item, Status.NOT_EVALUABLE, verdict.reason)
        factory = self.evaluator.factory(task.dialect)
        if factory is None:
            return self._record(item, Status.NOT_EVALUABLE, f"no {task.dialect} server here")
        try:
            prepared = prepare_database(factory, task, self.request.options.now)
        except DatabaseSetupError as exc:
            return self._record(item, Status.ERROR, f"bench: {exc}")
        try:
            executor = open_agent_executor(prepared.url)
        except ActsSqlError as exc:
            prepared.drop()
            return self._record(item, Status.ERROR, f"bench: cannot open the database: {exc}")
        try:
            result = self._correct(executor, task)
        except Exception as exc:  # a crash of the method must not end the whole run
            return self._record(item, Status.ERROR, f"bench: the method failed: {exc}")
        finally:
            executor.close()
            prepared.drop()
        return self._finish(item, result)

    def _correct(self, executor: Executor, task: Task) -> CorrectionResult:
        return correct(
            executor,
            task.query,
            ";\n".join(task.issue_sql) or None,  # no issue SQL: text-to-SQL
            llm=self.backend,
            options=self.spec.options,
        )

    def _finish(self, item: ScoredTask, result: CorrectionResult) -> BenchOutcome:
        """Score the method's SQL; the task's record, and its result for the trace file."""
        prediction = list(result.statements) or ([result.sql] if result.sql.strip() else [])
        scored = self.evaluator.score(item, prediction)
        usage = result.usage
        outcome = self._record(
            item,
            scored.status,
            scored.reason,
            pred_sqls=prediction,
            ran=True,
            accepted=result.accepted,
            stop_reason=result.reason,
            llm_calls=usage.llm_calls,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            seconds=usage.seconds,
            eval_seconds=scored.seconds,
            clock=scored.clock,
            clock_fixed=scored.clock_fixed,
        )
        return outcome.model_copy(update={"trace": result.model_dump(mode="json")})


class SharedWorkers:
    """Workers in threads of this process: they share the run's backend and evaluator."""

    def __init__(self, request: BenchRequest, backend: LLMBackend, evaluator: Evaluator) -> None:
        self.request, self.backend, self.evaluator = request, backend, evaluator

    def build(self) -> MethodWorker:
        return MethodWorker(self.request, self.backend, self.evaluator)


class ActorWorkers(BaseModel):
    """Workers as Ray actors: each builds its own backend and evaluator (one scoring
    process) from the request; the servers must be reachable from every node."""

    request: BenchRequest

    def build(self) -> MethodWorker:
        request = self.request
        backend = parse_llm_spec(request.method.llm, **request.llm_options)
        options = request.options.model_copy(update={"workers": 1})
        return MethodWorker(request, backend, Evaluator(options), owns_evaluator=True)


def run_bench(
    request: BenchRequest,
    *,
    backend: LLMBackend | None = None,
    on_record: RecordListener | None = None,
    on_start: Callable[[int], None] | None = None,
) -> BenchReport:
    """Run a method over the selected tasks; see the module doc."""
    return BenchRun(request, backend).run(on_record, on_start)
