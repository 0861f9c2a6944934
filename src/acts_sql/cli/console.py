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

Control characters never reach the terminal raw: a database cell, a file or
an LLM reply may hold ESC sequences (``ESC[2J`` clears the screen), carriage
returns, backspaces or bidi overrides (which reorder what is shown). `shown`
writes each as an escape (``\\x1b``, ``\\u202e``); the renderers call it on
the text they lay out (so column widths stay right), and the consoles of
`make_console` apply it once more to everything they print, so a renderer that
forgets cannot leak one. ``--json``, ``--trace`` and ``--html`` keep the exact
text (the HTML viewer inserts text as text, never as markup).

Long text is capped on the terminal (`capped`), saying how much was cut; JSON
output is never cut. Bad input ends a command with one ``error: ...`` line and
exit 2 (`fail`); so does every usage error click finds (`OneLineErrors`, the
root command's class); Ctrl-C ends it with one ``interrupted: ...`` line and
exit 130 (`interruptible`).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import typer
from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.text import Text
from typer.core import TyperGroup

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130
MAX_ERROR_CHARS = 600
"""An error line longer than this is cut (a message may quote a whole statement)."""


_BIDI = (*range(0x202A, 0x202F), *range(0x2066, 0x206A))
"""The bidi embeddings, overrides and isolates (LRE ... RLO, LRI ... PDI)."""
_NAMED = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}
_ESCAPES = {
    code: _NAMED.get(code, f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
    for code in (*range(0x20), *range(0x7F, 0xA0), *_BIDI)
}
_LAYOUT = {code: e for code, e in _ESCAPES.items() if code not in (0x09, 0x0A)}
_UNSAFE = re.compile("[" + "".join(f"\\u{code:04x}" for code in _ESCAPES) + "]")


def shown(text: str, *, layout: bool = False) -> str:
    """`text` safe for a terminal: every C0/C1 control character (ESC, BEL, CR, backspace,
    DEL, CSI U+009B, ...) and bidi override written as an escape, ``\\x1b``, ``\\u202e``.

    `layout`: newlines and tabs stay (multi-line text such as SQL or an error); without
    it they are escaped too (``\\n``, ``\\t``: a table cell, a one-line label).
    """
    if not _UNSAFE.search(text):
        return text
    return text.translate(_LAYOUT if layout else _ESCAPES)


class SafeConsole(Console):
    """A rich console whose output never carries a control character from the text it shows.

    rich's own styling and cursor codes are control segments, made after this
    filter; the text of every other segment goes through `shown` (newlines stay).
    """

    def render(
        self, renderable: RenderableType, options: ConsoleOptions | None = None
    ) -> Iterable[Segment]:
        for segment in super().render(renderable, options):
            if segment.control or not _UNSAFE.search(segment.text):
                yield segment
            else:
                yield Segment(shown(segment.text, layout=True), segment.style)


def make_console(*, stderr: bool = False) -> Console:
    """A console that prints strings as they are (no markup, emoji codes or highlighting),
    with control characters escaped (see `shown`)."""
    return SafeConsole(stderr=stderr, markup=False, emoji=False, highlight=False)


def capped(text: str, limit: int) -> str:
    """`text`, or its first `limit` characters and how many more were not shown."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit:,} more characters not shown)"


def one_line(message: str, limit: int = MAX_ERROR_CHARS) -> str:
    """`message` on one line (whitespace runs become one space, control characters
    escapes), capped at `limit`."""
    return capped(shown(" ".join(message.split())), limit)


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


class OneLineErrors(TyperGroup):
    """The root command: every usage error click finds (a bad or missing option value, an
    unknown option or command, an extra argument) is one ``error: ...`` line on stderr and
    exit 2, for every subcommand, instead of click's usage block. ``--help`` and a group
    called without a command still print their help."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        run = super().main
        if not standalone_mode:
            return run(args, prog_name, complete_var, False, windows_expand_args, **extra)
        try:
            code = run(args, prog_name, complete_var, False, windows_expand_args, **extra)
        except typer.TyperException as exc:  # click's errors (typer's copy of click)
            if type(exc).__name__ == "NoArgsIsHelpError":  # a group without its command
                show = getattr(exc, "show", None)
                if callable(show):
                    show()
                sys.exit(exc.exit_code)
            print_error(usage_message(exc))
            sys.exit(EXIT_BAD_INPUT if exc.exit_code == EXIT_BAD_INPUT else exc.exit_code)
        except typer.Abort:  # end of input at a prompt
            print_error("aborted")
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


def usage_message(exc: typer.TyperException) -> str:
    """click's message, and for a usage error where the command's options are listed."""
    message = exc.format_message().rstrip().removesuffix(".")
    where = getattr(getattr(exc, "ctx", None), "command_path", None) or "acts-sql"
    return f"{message} (see {where} --help)"
