"""`acts-sql doctor --db URL`: what the connection may do, and what acts-sql enforces.

One table: superuser or not, can it write, can it read server files, the
read-only guard, the engine's own read-only session, and whether
``--allow-writes`` could make its private copy (`acts_sql.db.doctor`).
``--json`` prints the report object. Exit 0 when the report was made (even
with warnings), 2 when the database cannot be opened.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from acts_sql.cli.console import fail, make_console, shown
from acts_sql.db.doctor import DoctorReport, diagnose
from acts_sql.errors import ActsSqlError

LEVEL_STYLE = {"ok": "green", "warning": "bold yellow", "info": ""}


def doctor(
    db: Annotated[str, typer.Option(help="database URL (sqlite:///path.db) or file path")],
    as_json: Annotated[bool, typer.Option("--json", help="print the report as JSON")] = False,
) -> None:
    """Check a connection: superuser, can write, can read server files, what is enforced."""
    try:
        report = diagnose(db)
    except ActsSqlError as exc:
        raise fail(str(exc)) from None
    if as_json:
        sys.stdout.write(report.model_dump_json(indent=1) + "\n")
        return
    console = make_console()
    console.print(report_table(report))
    warnings = len(report.warnings)
    if warnings:
        note = f"{warnings} warning(s): see docs/DATABASES.md#least-privilege-role"
        console.print(Text(note, style="yellow"))


def report_table(report: DoctorReport) -> Table:
    """The report as one table: check, value, what it means."""
    table = Table(title=Text(shown(f"acts-sql doctor: {report.database}")), title_justify="left")
    table.add_column("check", no_wrap=True)
    for column in ("value", "what it means"):
        table.add_column(column, overflow="fold")  # long names and links wrap, never cut
    for row in report.checks:
        style = LEVEL_STYLE[row.level]
        table.add_row(
            Text(row.name.value, style="bold"),
            Text(shown(row.value), style=style),
            Text(shown(row.meaning)),
        )
    return table


def register(app: typer.Typer) -> None:
    """Add `doctor` to the main command."""
    app.command(name="doctor")(doctor)


__all__ = ["doctor", "register", "report_table"]
