"""`acts-sql doctor`: what a connection may do, and what acts-sql enforces on it.

`diagnose(url)` opens the database exactly as a run does (read-only, through
`open_database`) and asks that session, through acts-sql's own read queries
(`run_internal`: catalog views, privilege functions, settings; nothing is
written), for:

- whether the account is a superuser, or has admin-like privileges;
- whether it can write (tables, sequences, schemas; for a file: this OS user);
- whether it can read or write files on the server;
- what the guard and the engine enforce (the read-only guard, and the engine's
  own read-only session, as that session reports it);
- whether ``--allow-writes`` could make its private copy.

The engine-specific questions are in `servers` (PostgreSQL, MariaDB/MySQL) and
`files` (SQLite, DuckDB); the report's shape is in `report`. A connection
that cannot be opened raises DatabaseOpenError (the CLI exits 2); a question
the server will not answer becomes a row saying so, never an exception.
"""

from __future__ import annotations

from pathlib import Path

from acts_sql.db.connect import open_database
from acts_sql.db.doctor.files import file_checks
from acts_sql.db.doctor.report import (
    SELECT_ONLY,
    Check,
    CheckName,
    DoctorReport,
    Session,
    guard_check,
)
from acts_sql.db.doctor.servers import mysql_checks, postgres_checks
from acts_sql.db.url import DatabaseURL, has_scheme, parse_url

__all__ = ["Check", "CheckName", "DoctorReport", "diagnose"]


def diagnose(url: str) -> DoctorReport:
    """The report for `url` (see the module doc); DatabaseOpenError when it cannot be opened."""
    session: Session = open_database(url)  # type: ignore[assignment]
    try:
        parsed = _target(url, session.dialect)
        checks = _engine_checks(session, parsed)
    finally:
        session.close()
    order = list(CheckName)
    rows = sorted([*checks, guard_check(session.dialect)], key=lambda r: order.index(r.name))
    return DoctorReport(database=parsed.redacted(), dialect=session.dialect, checks=rows)


def _target(url: str, dialect: str) -> DatabaseURL:
    """`url` parsed; a plain path is a file of the dialect the opener found."""
    text = url.strip()
    if has_scheme(text):
        return parse_url(text)
    path = str(Path(text).expanduser())
    return DatabaseURL(scheme=dialect, dialect=dialect, database=path)


def _engine_checks(session: Session, parsed: DatabaseURL) -> list[Check]:
    if session.dialect == "postgresql":
        return postgres_checks(session)
    if session.dialect == "mysql":
        return mysql_checks(session)
    if session.dialect in ("sqlite", "duckdb") and parsed.database:
        return file_checks(session, Path(parsed.database).expanduser())
    return [
        Check(
            name=CheckName.CONNECTION,
            value=f"opened ({session.dialect}); privileges are not inspected for this engine yet",
            level="warning",
            meaning=SELECT_ONLY,
        )
    ]
