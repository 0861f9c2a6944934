"""Tasks whose verdict can depend on the day: what reads the clock, and what ``--today`` fixes.

A task that compares dates with ``date('now')``, ``CURRENT_DATE`` or ``now()``
can pass one day and fail the next (a prediction that writes the date out
matches a solution that computes it only on that date). ``clock_readers``
finds the clock readers in a task's SQL and test code (a static, textual
scan: it may also flag a ``DEFAULT CURRENT_TIMESTAMP`` whose value no result
shows). ``--today YYYY-MM-DD`` runs the evaluator with the clock at noon UTC
of that day where that can be done faithfully: SQLite (the date and time
functions replaced on every connection the evaluator opens, see
``helpers/sqlite_clock.py``) and MySQL/MariaDB (``SET timestamp`` on every
connection; ``SYSDATE()`` still reads the real clock). PostgreSQL has no
per-session clock: its tasks keep the real one, and so does Python code in a
test case (``date.today()``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, date, datetime, time

NOON = time(12, 0, 0)
_SQL_READERS = [
    r"\bcurrent_(?:date|time|timestamp)\b",
    r"(?<!')\blocal(?:time|timestamp)\b(?!')",
    r"\b(?:now|curdate|curtime|sysdate|utc_date|utc_time|utc_timestamp|getdate|sysdatetime"
    r"|transaction_timestamp|statement_timestamp|clock_timestamp|timeofday)\s*\(",
    r"\bunix_timestamp\s*\(\s*\)",
    r"\b(?:date|time|datetime|julianday|unixepoch)\s*\(\s*\)",
    r"\bstrftime\s*\(\s*'[^']*'\s*\)",
    r"'(?:now|today|tomorrow|yesterday)'",
]
_PYTHON_READERS = [
    r"\b(?:date|datetime)\.(?:today|now|utcnow)\s*\(",
    r"\btime\.time\s*\(",
]
_SQL = re.compile("|".join(_SQL_READERS), re.IGNORECASE)
_PYTHON = re.compile("|".join(_PYTHON_READERS))
_NOT_FIXED_BY_MYSQL = re.compile(r"\bsysdate\b", re.IGNORECASE)
FIXABLE_DIALECTS = {"SQLite", "MySQL"}
"""Dialects whose clock ``--today`` fixes here."""


def fixed_now(today: date) -> datetime:
    """The instant the evaluator's clock shows for ``--today``: noon UTC of that day."""
    return datetime.combine(today, NOON, tzinfo=UTC)


def _normal(match: str) -> str:
    text = re.sub(r"\s+", "", match.lower())
    return text + ")" if text.endswith("(") else text


def clock_readers(sql: Iterable[str], python: Iterable[str] = ()) -> list[str]:
    """What reads the current date or time in ``sql`` (statements) and ``python`` (test code).

    Python sources are searched for both: their SQL literals and their own
    ``date.today()`` / ``datetime.now()`` calls (marked ``python:``).
    """
    found: set[str] = set()
    for text in sql:
        found.update(_normal(m.group(0)) for m in _SQL.finditer(text))
    for text in python:
        found.update(_normal(m.group(0)) for m in _SQL.finditer(text))
        found.update("python:" + _normal(m.group(0)) for m in _PYTHON.finditer(text))
    return sorted(found)


def clock_fixed(dialect: str, readers: list[str], today: date | None) -> bool:
    """Whether ``--today`` fixes every clock reader of a task of this dialect."""
    if today is None or not readers or dialect not in FIXABLE_DIALECTS:
        return False
    if any(reader.startswith("python:") for reader in readers):
        return False
    return not (dialect == "MySQL" and any(_NOT_FIXED_BY_MYSQL.search(r) for r in readers))
