"""Terminal output that never reads the text it shows as markup.

Everything the CLI prints may come from a user, a database, a file path or an
LLM. rich reads ``[b]`` and ``[/x]`` in a plain string as markup (and
``:name:`` as an emoji code): a string from outside would lose its brackets or
crash the command with a MarkupError. So every console comes from
`make_console`, whose strings are printed verbatim (no markup, no emoji codes,
no highlighting), and styled text is built as rich `Text` objects. The few rich
parts that always read a string as markup (panel titles, spinners, progress
columns) are given `Text` or told ``markup=False`` where they are built; the
CLI tests feed bracket strings through every output path to hold this.

Long text is capped on the terminal (`capped`), saying how much was cut; JSON
output is never cut. Bad input ends a command with one ``error: ...`` line and
exit 2 (`fail`), Ctrl-C with one ``interrupted: ...`` line and exit 130
(`interruptible`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import typer
from rich.console import Console
from rich.text import Text

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130
MAX_ERROR_CHARS = 600
"""An error line longer than this is cut (a message may quote a whole statement)."""


def make_console(*, stderr: bool = False) -> Console:
    """A console that prints strings as they are: no markup, emoji codes or highlighting."""
    return Console(stderr=stderr, markup=False, emoji=False, highlight=False)


def capped(text: str, limit: int) -> str:
    """`text`, or its first `limit` characters and how many more were not shown."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit:,} more characters not shown)"


def one_line(message: str, limit: int = MAX_ERROR_CHARS) -> str:
    """`message` on one line (whitespace runs become one space), capped at `limit`."""
    return capped(" ".join(message.split()), limit)


def print_error(message: str) -> None:
    """``error: MESSAGE`` as one line on stderr."""
    line = Text.assemble(("error:", "bold red"), " ", one_line(message))
    make_console(stderr=True).print(line, soft_wrap=True)


def fail(message: str) -> typer.Exit:
    """Print ``error: MESSAGE``; the exit to raise (code 2)."""
    print_error(message)
    return typer.Exit(EXIT_BAD_INPUT)


def print_interrupted(what: str) -> None:
    """``interrupted: WHAT`` as one line on stderr (on a terminal, after the ^C it echoed)."""
    console = make_console(stderr=True)
    line = Text.assemble(("interrupted:", "bold yellow"), " ", one_line(what))
    if console.is_terminal:
        line = Text("\n") + line
    console.print(line, soft_wrap=True)


@contextmanager
def interruptible(what: Callable[[], str]) -> Iterator[None]:
    """Ctrl-C inside: one line saying `what()` was interrupted, exit 130, no traceback.

    The interrupt unwinds the work first, so its cleanup (closing databases,
    removing throw-away copies) runs before the line is printed.
    """
    try:
        yield
    except KeyboardInterrupt:
        print_interrupted(what())
        raise typer.Exit(EXIT_INTERRUPTED) from None
