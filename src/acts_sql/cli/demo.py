"""`acts-sql demo`: the paper's three cases on the bundled SQLite database.

This build drives the engine with the scripted backend: each task replays
recorded agent replies (`acts_sql/demo/scripts/<task>.json`), so the demo
runs anywhere, offline, in seconds. Tools, execution, judging and
backtracking are real; only the LLM's words are recorded. The screen says so.
"""

from __future__ import annotations

import sys
from importlib import resources

from rich.console import Console
from rich.rule import Rule

from acts_sql.api import correct
from acts_sql.cli.render import progress_printer, show_result
from acts_sql.demo import demo_db_path, load_tasks
from acts_sql.errors import ConfigError
from acts_sql.llm.scripted import ScriptedBackend

SCRIPTED_NOTICE = (
    "LLM: scripted backend, replaying recorded agent replies (no model is loaded). "
    "Tools, SQL execution, judging and backtracking run for real on the demo database. "
    "Use `acts-sql fix --llm openai:MODEL` for a live model."
)


def script_path(task_id: str) -> str:
    return str(resources.files("acts_sql.demo").joinpath("scripts", f"{task_id}.json"))


def run_demo(task_id: str | None = None, as_json: bool = False) -> int:
    tasks = load_tasks()
    if task_id is not None:
        tasks = [t for t in tasks if t.id == task_id]
        if not tasks:
            known = ", ".join(t.id for t in load_tasks())
            raise ConfigError(f"unknown demo task {task_id!r}; tasks: {known}")
    console = Console(stderr=as_json)
    console.print(f"[bold]acts-sql demo[/] on {demo_db_path()}", highlight=False)
    console.print(SCRIPTED_NOTICE, style="yellow")
    all_accepted = True
    for task in tasks:
        console.print(Rule(task.title))
        console.print(f"[bold]issue:[/] {task.question}", highlight=False)
        result = correct(
            f"sqlite:///{demo_db_path()}",
            task.question,
            task.sql,
            llm=ScriptedBackend.from_file(script_path(task.id)),
            on_event=None if as_json else progress_printer(console),
        )
        all_accepted &= result.accepted
        if as_json:
            sys.stdout.write(result.model_dump_json() + "\n")
        else:
            show_result(console, result)
    return 0 if all_accepted else 1
