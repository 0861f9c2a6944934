"""`fix --ask`: the person chooses between readings at the terminal.

When readings of an ambiguous phrase lead to different results and nothing was accepted
(`acts_sql.engine.choice`), each reading is shown with its SQL and first rows, and a number
is read from the terminal. Enter, anything else, or no answer within the seconds left of the
run's wall-time budget leaves the engine's own choice. `--ask` needs a terminal on stdin.
"""

from __future__ import annotations

import select
import sys
from collections.abc import Callable
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from acts_sql.engine.choice import ChoiceAsker, ChoiceQuestion, ReadingOption
from acts_sql.errors import ConfigError

AskOpt = Annotated[
    bool,
    typer.Option(
        "--ask",
        help="when readings of an ambiguous phrase lead to different results and nothing is "
        "accepted, show them and let me choose (needs a terminal; the wait counts against "
        "--max-seconds)",
    ),
]
LineReader = Callable[[float], str | None]


def read_line(timeout: float) -> str | None:
    """A line typed on stdin within `timeout` seconds; None when none came."""
    ready, _, _ = select.select([sys.stdin], [], [], max(timeout, 0.0))
    return sys.stdin.readline() if ready else None


def require_terminal() -> None:
    if not sys.stdin.isatty():
        raise ConfigError(
            "--ask needs a terminal to read the choice from (stdin is not one); "
            "leave out --ask to let the engine choose"
        )


def terminal_asker(console: Console, read: LineReader | None = None) -> ChoiceAsker:
    """Shows the readings on `console` and reads the number of one (`read`: `read_line`)."""

    def ask(question: ChoiceQuestion, timeout: float) -> str | None:
        console.print(
            f"The issue can be read {len(question.readings)} ways, with different results:"
        )
        for k, option in enumerate(question.readings, 1):
            console.print(f"{k}. {option.reading}")
            console.print(option.sql, soft_wrap=True)
            console.print(_rows(option))
        console.print(
            f"Which reading? 1-{len(question.readings)}, Enter: let the engine choose "
            f"({timeout:.0f} s left)"
        )
        line = ((read or read_line)(timeout) or "").strip()
        if line.isdigit() and 1 <= int(line) <= len(question.readings):
            return question.readings[int(line) - 1].id
        return None

    return ask


def _rows(option: ReadingOption) -> Table:
    table = Table(*option.columns)
    for row in option.rows:
        table.add_row(*("NULL" if v is None else str(v) for v in row))
    if option.row_count > len(option.rows):
        table.add_row(*(["..."] * len(option.columns)))
    return table
