"""`acts-sql eval bird-critic` and `acts-sql bench bird-critic|candidates|compare`.

`eval` scores existing predictions (any system's, official format) or, with
``--mode gold|issue``, the solutions or the issue SQL. `bench bird-critic` runs
a method with an LLM over the tasks, writes predictions and scores them with
the same evaluator. Both write ``results.jsonl``, ``report.json`` and
``report.md``. `bench candidates` scores every candidate of a finished run
(``candidates.jsonl``); `bench compare` puts runs side by side.
Exit codes: 0 done; 2 bad input or configuration (one-line reason); 130
interrupted (one line: what was, and what of it is kept).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)

from acts_sql.bench.candidates import CandidateLine, CandidatesRequest, score_candidates
from acts_sql.bench.compare import compare, load_run, write_comparison
from acts_sql.bench.evaluate import EvalRequest, evaluate
from acts_sql.bench.models import EvalMode, Status, TaskResult
from acts_sql.bench.report import EvalReport, Tally
from acts_sql.bench.runner import BenchRequest, MethodSpec, run_bench
from acts_sql.bench.scorer import EvalOptions, ResultListener
from acts_sql.bench.selection import TaskFilter
from acts_sql.bench.servers import ServerURLs
from acts_sql.cli.console import fail, interruptible, make_console
from acts_sql.cli.inputs import writable_dir
from acts_sql.cli.options import (
    ApiKey,
    BaseUrl,
    Llm,
    LlmTimeout,
    MaxDepth,
    MaxLlmCalls,
    MaxNodes,
    MaxSeconds,
    NoAmbiguity,
    NoEvidenceGate,
    NoExecutionTools,
    NoScaledBudget,
    NoSchemaConstraint,
    correction_options,
    llm_overrides,
)
from acts_sql.engine.budget import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_LLM_CALLS,
    DEFAULT_MAX_NODES,
    DEFAULT_MAX_SECONDS,
)
from acts_sql.engine.options import Method
from acts_sql.errors import ActsSqlError
from acts_sql.llm.spec import parse_llm_spec
from acts_sql.scale import ExecutorKind

eval_app = typer.Typer(
    no_args_is_help=True, help="Score SQL predictions on a benchmark, as its official evaluator."
)
bench_app = typer.Typer(
    no_args_is_help=True, help="Run a correction method over a benchmark and score it."
)

TasksOpt = Annotated[Path, typer.Option(help="task file (tasks/<set>.jsonl) or directory")]
GtOpt = Annotated[
    Path | None, typer.Option(help="solutions: <set>_solutions.jsonl or the dev/ directory")
]
OutOpt = Annotated[Path, typer.Option(help="output directory")]
WorkersOpt = Annotated[int, typer.Option(min=1, max=64, help="tasks scored in parallel")]
SetOpt = Annotated[list[str] | None, typer.Option("--set", help="only these sets (repeatable)")]
DialectOpt = Annotated[
    list[str] | None, typer.Option("--dialect", help="only these dialects (repeatable)")
]
CategoryOpt = Annotated[
    list[str] | None, typer.Option("--category", help="only these categories (repeatable)")
]
IdsOpt = Annotated[
    str | None, typer.Option(help="comma-separated ids: PostgreSQL_5 or pg530/PostgreSQL_5")
]
LimitOpt = Annotated[int | None, typer.Option(min=0, help="at most N tasks")]
PgOpt = Annotated[
    str | None,
    typer.Option(help="PostgreSQL server URL (default: $ACTS_SQL_BENCH_PG_URL)"),
]
MyOpt = Annotated[
    str | None,
    typer.Option(help="MySQL/MariaDB server URL (default: $ACTS_SQL_BENCH_MYSQL_URL)"),
]
TodayOpt = Annotated[
    str | None,
    typer.Option(
        help="YYYY-MM-DD: score with the clock at noon UTC of that day (SQLite and MySQL; "
        "PostgreSQL keeps the real clock); tasks that read the clock are listed in the report"
    ),
]


def parse_today(value: str | None) -> date | None:
    """The ``--today`` day, or None; a bad value is bad input."""
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise fail(f"--today {value!r}: expected a date as YYYY-MM-DD") from None


@contextmanager
def command_errors(out: Path, interrupted: Callable[[], str]) -> Iterator[None]:
    """Bad input, or `out` that cannot be written: one line and exit 2; Ctrl-C: one line
    saying what `interrupted()` names, and exit 130."""
    with interruptible(interrupted):
        try:
            yield
        except ActsSqlError as exc:
            raise fail(str(exc)) from None
        except OSError as exc:
            raise fail(f"cannot write to {out}: {exc.strerror or exc}") from None


def make_filter(
    sets: list[str] | None,
    dialects: list[str] | None,
    categories: list[str] | None,
    ids: str | None,
    limit: int | None,
    with_solution_only: bool,
) -> TaskFilter:
    return TaskFilter(
        sets=sets or [],
        dialects=dialects or [],
        categories=categories or [],
        ids=[i.strip() for i in (ids or "").split(",") if i.strip()],
        limit=limit,
        with_solution_only=with_solution_only,
    )


class ProgressHooks:
    """The callbacks a run reports to: the number of tasks, then each verdict."""

    def __init__(
        self, start: Callable[[int], None], result: ResultListener, done: list[TaskResult]
    ) -> None:
        self.start = start
        self.result = result
        self._done = done

    @property
    def finished(self) -> int:
        """Tasks reported so far."""
        return len(self._done)


@contextmanager
def progress_bar(console: Console, label: str) -> Iterator[ProgressHooks]:
    """A progress bar with the running accuracy; yields its callbacks."""
    lock = threading.Lock()
    done: list[TaskResult] = []
    columns = (
        TextColumn("{task.description}", style="bold", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[score]}", markup=False),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=False) as progress:
        task_id = progress.add_task(label, total=None, score="")

        def on_result(result: TaskResult) -> None:
            with lock:
                done.append(result)
                tally = Tally.of(done)
            accuracy = "–" if tally.accuracy is None else f"{tally.accuracy:.1f}%"
            progress.update(
                task_id,
                advance=1,
                score=f"passed {tally.passed}/{tally.evaluable} ({accuracy})",
            )

        def on_start(total: int) -> None:
            progress.update(task_id, total=total)

        yield ProgressHooks(on_start, on_result, done)


def summary_line(report: EvalReport, out: Path) -> str:
    t = report.overall
    accuracy = "–" if t.accuracy is None else f"{t.accuracy:.2f} %"
    line = (
        f"accuracy {accuracy}: {t.passed}/{t.evaluable} evaluable tasks passed "
        f"({t.not_evaluable} of {t.tasks} not evaluable here) -> {out}/report.md"
    )
    if report.unexpected:
        what = "solutions not passing" if report.mode == EvalMode.GOLD else "issue SQL passing"
        line += f"\n{what}: {', '.join(report.unexpected)}"
    return line


@eval_app.command("bird-critic")
def eval_bird_critic(
    tasks: TasksOpt,
    out: OutOpt,
    gt: GtOpt = None,
    preds: Annotated[
        Path | None, typer.Option(help="predictions JSONL: {instance_id, pred_sqls}")
    ] = None,
    mode: Annotated[
        EvalMode, typer.Option(help="pred: predictions; gold: the solutions; issue: the issue SQL")
    ] = EvalMode.PRED,
    workers: WorkersOpt = 2,
    sets: SetOpt = None,
    dialects: DialectOpt = None,
    categories: CategoryOpt = None,
    ids: IdsOpt = None,
    limit: LimitOpt = None,
    evaluable_only: Annotated[
        bool,
        typer.Option(help="leave out tasks without a solution instead of listing them"),
    ] = False,
    pg_url: PgOpt = None,
    mysql_url: MyOpt = None,
    task_timeout: Annotated[float, typer.Option(help="seconds per task")] = 300.0,
    test_timeout: Annotated[float, typer.Option(help="seconds per test case")] = 120.0,
    today: TodayOpt = None,
) -> None:
    """Score predictions on BIRD-CRITIC exactly as the official evaluator does."""
    console = make_console(stderr=True)
    fixed_day = parse_today(today)
    with command_errors(out, lambda: f"eval bird-critic; no report was written to {out}"):
        writable_dir(out, "--out")
        request = EvalRequest(
            tasks=tasks,
            gt=gt,
            preds=preds,
            out=out,
            options=EvalOptions(
                mode=mode,
                workers=workers,
                task_timeout_s=task_timeout,
                test_timeout_s=test_timeout,
                servers=ServerURLs.resolve(pg_url, mysql_url),
                today=fixed_day,
            ),
            filter=make_filter(sets, dialects, categories, ids, limit, evaluable_only),
        )
        with progress_bar(console, f"eval {mode.value}") as hooks:
            report = evaluate(request, on_start=hooks.start, on_result=hooks.result)
    console.print(summary_line(report, out), soft_wrap=True)


BenchMethod = Annotated[
    Method,
    typer.Option(help=" | ".join(m.value for m in Method) + " (raw: the official baseline prompt)"),
]
AllTasksOpt = Annotated[
    bool,
    typer.Option(
        "--all-tasks", help="also run tasks that cannot be scored here (no solution/tables)"
    ),
]
BenchCandidates = Annotated[
    int | None,
    typer.Option("--candidates", min=1, help="candidates per generation (default: the method's)"),
]
BenchTemperature = Annotated[
    float | None,
    typer.Option("--temperature", min=0.0, help="sampling temperature (default: the method's)"),
]
ExecutorOpt = Annotated[
    ExecutorKind,
    typer.Option(
        help="local: --workers threads of this process; ray: --workers Ray actors, each "
        "with its own backend and evaluator"
    ),
]
RayAddressOpt = Annotated[
    str | None,
    typer.Option(help="--executor ray: the cluster; empty: a local Ray cluster for the run"),
]


@bench_app.command("bird-critic")
def bench_bird_critic(
    ctx: typer.Context,
    tasks: TasksOpt,
    out: OutOpt,
    gt: GtOpt = None,
    method: BenchMethod = Method.ACTS,
    llm: Llm = None,
    base_url: BaseUrl = None,
    api_key: ApiKey = None,
    llm_timeout: LlmTimeout = None,
    workers: WorkersOpt = 1,
    sets: SetOpt = None,
    dialects: DialectOpt = None,
    categories: CategoryOpt = None,
    ids: IdsOpt = None,
    limit: LimitOpt = None,
    all_tasks: AllTasksOpt = False,
    no_execution_tools: NoExecutionTools = False,
    no_ambiguity: NoAmbiguity = False,
    no_evidence_gate: NoEvidenceGate = False,
    no_scaled_budget: NoScaledBudget = False,
    no_schema_constraint: NoSchemaConstraint = False,
    max_llm_calls: MaxLlmCalls = DEFAULT_MAX_LLM_CALLS,
    max_nodes: MaxNodes = DEFAULT_MAX_NODES,
    max_depth: MaxDepth = DEFAULT_MAX_DEPTH,
    max_seconds: MaxSeconds = DEFAULT_MAX_SECONDS,
    candidates: BenchCandidates = None,
    temperature: BenchTemperature = None,
    pg_url: PgOpt = None,
    mysql_url: MyOpt = None,
    today: TodayOpt = None,
    executor: ExecutorOpt = ExecutorKind.LOCAL,
    ray_address: RayAddressOpt = None,
) -> None:
    """Run a correction method over BIRD-CRITIC tasks and score its predictions.

    Writes preds.jsonl (official format), records.jsonl (per task: prediction,
    verdict, LLM calls, tokens, seconds), traces/, results.jsonl, report.json
    and report.md. Re-running into the same --out skips the tasks already done.
    """
    console = make_console(stderr=True)
    fixed_day = parse_today(today)
    seen: list[ProgressHooks] = []
    with command_errors(out, lambda: bench_interrupted(out, seen)):
        writable_dir(out, "--out")
        request = bench_request(ctx.params, fixed_day)
        backend = parse_llm_spec(llm, **request.llm_options)
        with progress_bar(console, f"bench {request.method.label}") as hooks:
            seen.append(hooks)
            report = run_bench(
                request,
                backend=backend,
                on_start=hooks.start,
                on_record=lambda r: hooks.result(r.result()),
            )
    console.print(summary_line(report, out), soft_wrap=True)


def bench_interrupted(out: Path, seen: list[ProgressHooks]) -> str:
    """What an interrupted `bench bird-critic` leaves (`seen`: its progress bar, once shown)."""
    finished = seen[0].finished if seen else 0
    return (
        f"bench bird-critic after {finished} finished task(s), kept in {out}/records.jsonl: "
        "the same command goes on from there"
    )


def bench_request(flags: dict[str, Any], today: date | None) -> BenchRequest:
    """The run `bench bird-critic` asks for, from its flags (by parameter name)."""
    return BenchRequest(
        tasks=flags["tasks"],
        gt=flags["gt"],
        out=flags["out"],
        method=MethodSpec(llm=flags["llm"], options=correction_options(flags)),
        filter=make_filter(
            flags["sets"],
            flags["dialects"],
            flags["categories"],
            flags["ids"],
            flags["limit"],
            False,
        ),
        options=EvalOptions(
            workers=flags["workers"],
            servers=ServerURLs.resolve(flags["pg_url"], flags["mysql_url"]),
            today=today,
        ),
        evaluable_only=not flags["all_tasks"],
        executor=flags["executor"],
        ray_address=flags["ray_address"],
        llm_options=llm_overrides(flags),
    )


def candidate_progress(line: CandidateLine, done: int, total: int) -> str:
    """One stderr line per task of `bench candidates`."""
    if line.trace_missing:
        found = "no trace"
    else:
        found = f"{line.candidates} candidates"
        if line.duplicates:
            found += f" (+{line.duplicates} duplicates)"
        found += f", {line.executing} execute"
        found += f", {line.passing} pass" if line.evaluable else ", not evaluable"
    final = "passed" if line.final_passed else line.final_status.value
    if line.wrong_acceptance:
        final += ", WRONGLY ACCEPTED"
    elif line.accepted:
        final += ", accepted"
    return (
        f"[{done}/{total}] {line.set}/{line.instance_id}: {found}; final {final}"
        f" ({line.scored} scored, {line.seconds:.1f} s)"
    )


@bench_app.command("candidates")
def bench_candidates(
    run: Annotated[Path, typer.Argument(help="output directory of `bench bird-critic`")],
    tasks: TasksOpt,
    gt: GtOpt = None,
    workers: WorkersOpt = 1,
    pg_url: PgOpt = None,
    mysql_url: MyOpt = None,
    task_timeout: Annotated[float, typer.Option(help="seconds per candidate")] = 300.0,
    test_timeout: Annotated[float, typer.Option(help="seconds per test case")] = 120.0,
    today: TodayOpt = None,
) -> None:
    """Score every candidate SQL of a finished run: was the right SQL generated, and selected?

    Reads RUN/records.jsonl and each task's trace, scores every distinct candidate
    (duplicates: same SQL after normalisation) with the bench's evaluator and
    writes RUN/candidates.jsonl, one line per task. Resumable: tasks already in
    candidates.jsonl are skipped. `bench compare` reads it.
    """
    console = make_console(stderr=True)
    fixed_day = parse_today(today)
    with command_errors(
        run, lambda: f"bench candidates; the tasks scored so far are kept in {run}/candidates.jsonl"
    ):
        request = CandidatesRequest(
            run=run,
            tasks=tasks,
            gt=gt,
            options=EvalOptions(
                workers=workers,
                task_timeout_s=task_timeout,
                test_timeout_s=test_timeout,
                servers=ServerURLs.resolve(pg_url, mysql_url),
                today=fixed_day,
            ),
        )

        def on_line(line: CandidateLine, done: int, total: int) -> None:
            console.print(candidate_progress(line, done, total), soft_wrap=True)

        lines = score_candidates(request, on_line=on_line)
    scored = [line for line in lines if line.evaluable]
    generated = sum(1 for line in scored if line.any_pass)
    selected = sum(1 for line in scored if line.final_passed)
    wrong = sum(1 for line in scored if line.wrong_acceptance)
    accepted = sum(1 for line in scored if line.accepted)
    console.print(
        f"{len(scored)} tasks scored: a candidate passes in {generated}, the final SQL in "
        f"{selected}; wrong acceptances {wrong}/{accepted} -> {run}/candidates.jsonl",
        soft_wrap=True,
    )


@bench_app.command("compare")
def bench_compare(
    runs: Annotated[list[Path], typer.Argument(help="output directories of `bench bird-critic`")],
    out: OutOpt,
    baseline: Annotated[
        str, typer.Option(help="run (name) that correct→broken is counted against")
    ] = "raw",
    names: Annotated[
        str | None,
        typer.Option(
            help="comma-separated names of the runs, in order (default: the method label, "
            "or the directory name where method labels collide)"
        ),
    ] = None,
) -> None:
    """Put several runs side by side (paper-shaped tables) in OUT/comparison.md and .json.

    Also charts accuracy against mean LLM calls per task and accuracy by dialect
    (OUT/compare-*.png and .svg, linked from the page) when matplotlib is installed
    (`acts-sql[plots]`); without it the page has the same numbers as tables.

    A run with candidates.jsonl (`bench candidates`) also gets its generation and
    selection columns: any candidate passes, candidates executing, duplicates.
    """
    console = make_console(stderr=True)
    with command_errors(out, lambda: f"bench compare; {out} may be incomplete"):
        writable_dir(out, "--out")
        labels = None if names is None else [n.strip() for n in names.split(",")]
        comparison = compare([load_run(path) for path in runs], baseline=baseline, names=labels)
        charts = write_comparison(out, comparison)
    if charts.hint:
        console.print(charts.hint, markup=False, highlight=False)
    console.print(f"{len(runs)} runs, {comparison.tasks} common tasks -> {out}/comparison.md")


def register(app: typer.Typer) -> None:
    """Add `eval` and `bench` to the main command."""
    app.add_typer(eval_app, name="eval")
    app.add_typer(bench_app, name="bench")


__all__ = ["Status", "bench_app", "eval_app", "register"]
