"""`acts-sql demo`: the paper's three cases on the bundled SQLite database.

By default a real model corrects them: the embedded local model
(qwen2.5-coder-1.5b, in process with llama.cpp), assembled and loaded first
with progress on screen. Each task is budgeted (12 LLM calls, 300 s; the 1.5B
used its 12 calls in 183 to 229 s a task on 2 cores) so the demo ends in about
ten minutes; a small model is weak and may not find the intended SQL: the
demo then shows what it tried, and still ends cleanly (exit 0 once every task
ran). ``--llm SPEC`` picks another model (``local:qwen2.5-coder-0.5b``, faster
and weaker; ``openai:MODEL``).

``--llm scripted`` replays recorded agent replies instead
(``acts_sql/demo/scripts/<task>.json``): no model, seconds, the same on every
machine. Tools, execution, judging and backtracking are real either way. In
this mode the exit code is 0 only if every task was accepted (the scripts
are written to succeed, so anything else is a bug).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from importlib import resources
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from acts_sql.api import correct
from acts_sql.cli.console import interruptible, make_console
from acts_sql.cli.render import progress_line, show_result
from acts_sql.db.connect import open_database
from acts_sql.demo import DemoTask, demo_db_path, load_tasks
from acts_sql.engine.budget import Budget
from acts_sql.engine.events import LlmCallData, TraceEvent
from acts_sql.engine.options import CorrectionOptions
from acts_sql.engine.result import CorrectionResult
from acts_sql.errors import ConfigError, LLMSpecError
from acts_sql.llm.base import LLMBackend, LLMRequest, LLMResponse
from acts_sql.llm.local import LocalBackend
from acts_sql.llm.models import DEFAULT_LOCAL_MODEL, ProgressEvent
from acts_sql.llm.scripted import ScriptedBackend
from acts_sql.llm.spec import parse_llm_spec

SCRIPTED = "scripted"
DEFAULT_DEMO_LLM = f"local:{DEFAULT_LOCAL_MODEL}"
LIVE_MAX_LLM_CALLS = 12
LIVE_MAX_SECONDS = 300.0
SCRIPTED_MAX_LLM_CALLS = 40
SCRIPTED_MAX_SECONDS = 600.0
SCRIPTED_NOTICE = (
    "LLM: scripted backend, replaying recorded agent replies (no model is loaded). "
    "Tools, SQL execution, judging and backtracking run for real on the demo database. "
    "Run `acts-sql demo` without --llm for the embedded local model."
)


def task_ids() -> list[str]:
    """The ids of the bundled example tasks, in order."""
    return [task.id for task in load_tasks()]


def script_path(task_id: str) -> str:
    return str(resources.files("acts_sql.demo").joinpath("scripts", f"{task_id}.json"))


def run_demo(
    task_id: str | None = None,
    as_json: bool = False,
    *,
    llm: str | None = None,
    max_llm_calls: int | None = None,
    max_seconds: float | None = None,
) -> int:
    """Run the demo; the exit code (see the module docstring)."""
    tasks = _select(task_id)
    console = make_console(stderr=as_json)
    console.print(Text.assemble(("acts-sql demo", "bold"), f" on {demo_db_path()}"))
    scripted = (llm or "").strip().lower() == SCRIPTED
    live: LLMBackend | None = None
    if scripted:
        console.print(SCRIPTED_NOTICE, style="yellow")
        options = _options(max_llm_calls, max_seconds, SCRIPTED_MAX_LLM_CALLS, SCRIPTED_MAX_SECONDS)
    else:
        options = _options(max_llm_calls, max_seconds, LIVE_MAX_LLM_CALLS, LIVE_MAX_SECONDS)
        live = _prepare_live(llm or DEFAULT_DEMO_LLM, console, options.budget)
    results: list[tuple[DemoTask, CorrectionResult]] = []

    def where() -> str:
        current = tasks[min(len(results), len(tasks) - 1)].id
        return f"the demo at task {current} ({len(results)} of {len(tasks)} done)"

    with interruptible(where):
        for task in tasks:
            results.append((task, _run_task(task, console, live, options, as_json=as_json)))
    intended = [gives_intended_result(task, result) for task, result in results]
    console.print(summary_table(results, intended))
    accepted = sum(result.accepted for _, result in results)
    right = sum(intended)
    if not scripted and right < len(results):
        console.print(
            f"{accepted} of {len(results)} task(s) accepted by the agent, {right} with the "
            "intended result. A small local model often misses the intended SQL (and may "
            "accept a wrong one); the trees above show what it tried. Try "
            "--llm openai:MODEL for a stronger model.",
            style="yellow",
        )
    if scripted:
        return 0 if accepted == len(results) else 1
    return 0


def _run_task(
    task: DemoTask,
    console: Console,
    live: LLMBackend | None,
    options: CorrectionOptions,
    *,
    as_json: bool,
) -> CorrectionResult:
    """Correct one task with the live model (or its script), showing it as it goes."""
    console.print(Rule(Text(task.title)))
    console.print(Text.assemble(("issue:", "bold"), f" {task.question}"))
    console.print(Text.assemble(("SQL to correct:", "bold"), f" {task.sql}"))
    result = correct(
        f"sqlite:///{demo_db_path()}",
        task.question,
        task.sql,
        llm=live or ScriptedBackend.from_file(script_path(task.id)),
        options=options,
        on_event=None if as_json else demo_progress(console),
    )
    if as_json:
        sys.stdout.write(result.model_dump_json() + "\n")
    else:
        show_result(console, result)
    return result


def _select(task_id: str | None) -> list[DemoTask]:
    tasks = load_tasks()
    if task_id is None:
        return tasks
    chosen = [t for t in tasks if t.id == task_id]
    if not chosen:
        known = ", ".join(t.id for t in tasks)
        raise ConfigError(f"unknown demo task {task_id!r}; tasks: {known}")
    return chosen


def _options(
    max_llm_calls: int | None, max_seconds: float | None, calls: int, seconds: float
) -> CorrectionOptions:
    """The demo's options: its budget per task, `--max-llm-calls` / `--max-seconds` if given."""
    return CorrectionOptions.of(
        max_llm_calls=calls if max_llm_calls is None else max_llm_calls,
        max_seconds=seconds if max_seconds is None else max_seconds,
    )


def _prepare_live(spec: str, console: Console, budget: Budget) -> LLMBackend:
    """The backend for a live model, loaded now with progress on screen."""
    try:
        backend = parse_llm_spec(spec)
    except LLMSpecError as exc:
        raise LLMSpecError(
            f"{exc}; `acts-sql demo --llm scripted` runs the demo without a model"
        ) from None
    if isinstance(backend, LocalBackend):
        console.print(Text.assemble(("LLM:", "bold"), f" {backend.describe()}"))
        with interruptible(lambda: f"loading the model {backend.title}"):
            backend.load(progress=ModelProgressView(console))
        label = backend.title
    else:
        console.print(Text.assemble(("LLM:", "bold"), f" {backend.name}"))
        label = backend.name
    console.print(
        f"Budget per task: {budget.max_llm_calls} LLM calls, {budget.max_seconds:g} s. "
        "Every reply comes from the model; a small one may miss the intended SQL, and the demo "
        "shows what it tried.",
        style="dim",
    )
    return WorkingIndicator(backend, console, label)


class ModelProgressView:
    """Shows model assembly (a progress bar) and loading on a console."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._bar: Progress | None = None
        self._task: Any = None

    def __call__(self, event: ProgressEvent) -> None:
        if event.stage == "assemble":
            self._advance(event)
            return
        self._close_bar()
        if event.stage == "install":
            self.console.print(Text(f"{event.message} (pip; may take a minute)"))
        else:
            self.console.print(Text(event.message))

    def _advance(self, event: ProgressEvent) -> None:
        if self._bar is None:
            self._bar = Progress(
                TextColumn("{task.description}", markup=False),
                BarColumn(),
                DownloadColumn(),
                TimeRemainingColumn(),
                console=self.console,
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task(
                f"{event.message} (verifying sha256)", total=event.total or None
            )
        self._bar.update(self._task, completed=event.done)

    def _close_bar(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


class WorkingIndicator:
    """An LLMBackend wrapper that shows a spinner while the model writes a reply."""

    def __init__(self, inner: LLMBackend, console: Console, label: str) -> None:
        self.inner = inner
        self.name = inner.name
        self._console = console
        self._label = label

    def complete(self, request: LLMRequest) -> LLMResponse:
        with self._console.status(Text(f"{self._label} is writing the {request.purpose} reply…")):
            return self.inner.complete(request)


def demo_progress(console: Console) -> Callable[[TraceEvent], None]:
    """Progress lines; an LLM call line also says how much of the prompt was cached."""

    def show(event: TraceEvent) -> None:
        line: str | None
        if isinstance(event.data, LlmCallData) and event.data.ok:
            data = event.data
            line = (
                f"  · LLM {event.purpose}: {data.prompt_tokens} prompt tokens "
                f"({data.cached_prompt_tokens} cached) + "
                f"{data.completion_tokens} written, {data.seconds:.1f} s"
            )
        else:
            line = progress_line(event)
        if line is not None:
            console.print(Text(line, style="dim"))

    return show


def gives_intended_result(task: DemoTask, result: CorrectionResult) -> bool:
    """True when the final SQL returns the rows of the paper's intended SQL (any order)."""
    if result.result is None or result.result.status != "ok" or not result.sql.strip():
        return False
    executor = open_database(f"sqlite:///{demo_db_path()}")
    try:
        wanted = executor.execute(task.right_sql)
        got = executor.execute(result.sql)
    finally:
        executor.close()
    return (
        wanted.status == got.status == "ok"
        and not wanted.truncated
        and not got.truncated
        and _as_multiset(wanted.rows) == _as_multiset(got.rows)
    )


def _as_multiset(rows: list[list[Any]]) -> list[str]:
    return sorted(repr(row) for row in rows)


def summary_table(results: list[tuple[DemoTask, CorrectionResult]], intended: list[bool]) -> Table:
    table = Table(title="demo summary", title_justify="left")
    for column in ("task", "verdict", "intended result"):
        table.add_column(column)
    for column in ("LLM calls", "prompt tokens (cached)", "written", "wall"):
        table.add_column(column, justify="right")
    for (task, result), right in zip(results, intended, strict=True):
        usage = result.usage
        table.add_row(
            task.id,
            "accepted" if result.accepted else "not accepted",
            "yes" if right else "no",
            str(usage.llm_calls),
            f"{usage.prompt_tokens} ({usage.cached_prompt_tokens})",
            str(usage.completion_tokens),
            f"{usage.seconds:.1f} s",
        )
    return table
