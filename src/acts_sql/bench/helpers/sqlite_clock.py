"""A fixed 'now' for SQLite: the date and time functions replaced on a connection.

SQLite reads the clock in its date and time functions only (a time value of
``'now'``, or none at all) and in ``CURRENT_DATE`` / ``CURRENT_TIME`` /
``CURRENT_TIMESTAMP``, which the parser turns into calls of functions of
those names. An application-defined function overrides a built-in of the
same name, so each of them is registered on the connection with a
replacement that puts the fixed instant where SQLite would read the clock and
hands the call to the real built-in on a private in-memory connection: every
modifier, format and NULL rule stays SQLite's own. Column defaults, views and
triggers that call them see the fixed clock too.

The replacements are registered as deterministic (with a fixed clock they
are), so SQLite accepts ``date(x)`` in an index or a generated column as it
does with its own functions; unlike SQLite, it also accepts ``'now'`` there.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import datetime
from typing import Any

TIME_VALUE_AT = {
    "date": 0,
    "time": 0,
    "datetime": 0,
    "julianday": 0,
    "unixepoch": 0,
    "strftime": 1,
}
"""Each date function and the position of its time value (after strftime's format)."""
KEYWORD_FUNCTIONS = {
    "current_date": "date",
    "current_time": "time",
    "current_timestamp": "datetime",
}
"""CURRENT_* and the function whose value on the fixed instant they give."""


class FixedClock:
    """Installs the replacements on connections; ``now`` is the fixed instant (UTC)."""

    def __init__(self, now: datetime) -> None:
        self.now_text = now.strftime("%Y-%m-%d %H:%M:%S")
        self._builtin = sqlite3.connect(":memory:", check_same_thread=False)
        self._known = {name for name in TIME_VALUE_AT if self._has(name)}

    def _has(self, name: str) -> bool:
        try:
            self._builtin.execute(f"SELECT {name}('2000-01-01')")
        except sqlite3.OperationalError:  # an older SQLite without it (unixepoch: 3.38)
            return False
        return True

    def builtin(self, name: str, args: list[Any]) -> Any:
        """The real built-in's value for these arguments."""
        marks = ", ".join("?" * len(args))
        return self._builtin.execute(f"SELECT {name}({marks})", args).fetchone()[0]

    def replacement(self, name: str, position: int) -> Callable[..., Any]:
        def fixed(*args: Any) -> Any:
            values = list(args)
            if len(values) == position:
                values.append(self.now_text)
            elif len(values) > position:
                value = values[position]
                if isinstance(value, str) and value.lower() == "now":
                    values[position] = self.now_text
            return self.builtin(name, values)

        return fixed

    def install(self, conn: sqlite3.Connection) -> None:
        """Replace the clock-reading functions of ``conn``."""
        for name in sorted(self._known):
            conn.create_function(
                name, -1, self.replacement(name, TIME_VALUE_AT[name]), deterministic=True
            )
        for keyword, function in KEYWORD_FUNCTIONS.items():
            value = self.builtin(function, [self.now_text])
            conn.create_function(keyword, 0, lambda value=value: value, deterministic=True)

    def close(self) -> None:
        self._builtin.close()
