"""Sequences of a DuckDB copy, set back after an isolated batch.

DuckDB does not roll back `nextval` with the transaction, so a batch that is
rolled back would still leave its sequences moved, and the next isolated
call would not start from the same state. `SequenceKeeper` sets them back
with `setval`.

One subtlety: `duckdb_sequences()` shows a sequence's last value, but not
whether it was called since `setval(s, v, false)`, which is how a sequence
that was never used is put back. So the keeper remembers, for each sequence,
the state to restore (called at a value, or not called yet) and the value
`duckdb_sequences()` shows while it is in that state; a sequence whose shown
value differs has moved. A never-called sequence is put back with
`setval(s, start + increment, true)` then `setval(s, start, false)`: it then
shows `start + increment`, a value that the next `nextval` (which returns
`start`) is bound to change.
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass
from typing import Any

_SEQUENCES = (
    "SELECT schema_name, sequence_name, start_value, increment_by, min_value, max_value, "
    "last_value FROM duckdb_sequences() WHERE database_name = current_database() "
    "AND NOT temporary"
)


@dataclass(frozen=True)
class _Seen:
    """A sequence as `duckdb_sequences()` shows it."""

    start: int
    step: int
    low: int
    high: int
    shown: int | None


@dataclass(frozen=True)
class _Kept:
    """What to restore (`last` None: not called yet) and what is shown meanwhile."""

    last: int | None
    shown: int | None


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _read(conn: Any) -> dict[str, _Seen]:
    """Every persistent sequence of the database, by its quoted qualified name."""
    rows = conn.execute(_SEQUENCES).fetchall()
    return {
        f"{_quote(str(schema))}.{_quote(str(name))}": _Seen(
            int(start), int(step), int(low), int(high), None if last is None else int(last)
        )
        for schema, name, start, step, low, high, last in rows
    }


class SequenceKeeper:
    """Remembers the sequences of a copy and sets back those an isolated batch moved."""

    def __init__(self) -> None:
        self._kept: dict[str, _Kept] = {}

    def note(self, conn: Any) -> None:
        """After a batch that is kept: sequences that moved now stand where they are."""
        with suppress(Exception):
            seen = _read(conn)
            kept: dict[str, _Kept] = {}
            for name, now in seen.items():
                before = self._kept.get(name)
                if before is None or before.shown != now.shown:  # new, or moved
                    before = _Kept(now.shown, now.shown)
                kept[name] = before
            self._kept = kept

    def restore(self, conn: Any) -> list[str]:
        """After an isolated batch: set back every sequence it moved; returns their names."""
        moved: list[str] = []
        with suppress(Exception):
            for name, now in _read(conn).items():
                before = self._kept.get(name)
                if before is None or before.shown == now.shown:
                    continue
                with suppress(Exception):
                    self._kept[name] = _set_back(conn, name, now, before.last)
                    moved.append(name)
        return moved


def _set_back(conn: Any, name: str, seen: _Seen, last: int | None) -> _Kept:
    """Put sequence `name` back to called-at-`last`, or to not called yet (None)."""
    if last is not None:
        conn.execute("SELECT setval(?, ?, true)", [name, last])
        return _Kept(last, last)
    marks = [seen.start + seen.step, seen.start - seen.step]
    mark = next((value for value in marks if seen.low <= value <= seen.high), None)
    if mark is not None:
        conn.execute("SELECT setval(?, ?, true)", [name, mark])
    conn.execute("SELECT setval(?, ?, false)", [name, seen.start])
    return _Kept(None, mark if mark is not None else seen.shown)
