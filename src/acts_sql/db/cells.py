"""Cell values that `json.dumps` accepts and a prompt can show.

Drivers return Decimal, datetime, date, time, timedelta (intervals), UUID,
bytes, IP addresses, ranges, arrays and JSON documents. Executors pass every
cell through `json_safe`: numbers stay numbers where that loses nothing, the
rest becomes text in the engine's usual spelling.

    >>> from decimal import Decimal
    >>> json_safe(Decimal("12.50")), json_safe(Decimal("10"))
    (12.5, 10)
    >>> json_safe(Decimal("0.1000000000000000000001"))
    '0.1000000000000000000001'
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from typing import Any

MAX_HEX_BLOB = 32
_PLAIN = (str, int, bool, type(None))


def json_safe(value: Any) -> Any:
    """`value` as str, int, float, bool, None, or a list/dict of those."""
    if isinstance(value, _PLAIN):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Decimal):
        return _decimal(value)
    if isinstance(value, bytes | bytearray | memoryview):
        data = bytes(value)
        return data.hex() if len(data) <= MAX_HEX_BLOB else f"<blob {len(data)} bytes>"
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat(sep=" ") if isinstance(value, dt.datetime) else value.isoformat()
    if isinstance(value, dt.timedelta):
        return _interval(value)
    if isinstance(value, list | tuple | set | frozenset):
        return [json_safe(item) for item in value]
    if isinstance(value, dict):
        return {str(key): json_safe(item) for key, item in value.items()}
    return str(value)  # UUID, IP addresses, ranges, geometry, driver-specific types


def _decimal(value: Decimal) -> int | float | str:
    if not value.is_finite():
        return str(value)
    if value == value.to_integral_value():
        return int(value)
    as_float = float(value)
    return as_float if Decimal(repr(as_float)) == value else str(value)


def _interval(value: dt.timedelta) -> str:
    """An interval as PostgreSQL prints it: '1 day 02:03:04', '-00:00:01.5'."""
    sign = "-" if value < dt.timedelta(0) else ""
    value = abs(value)
    hours, rest = divmod(value.seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    clock = f"{hours:02d}:{minutes:02d}:{seconds:02d}"
    if value.microseconds:
        clock += f".{value.microseconds:06d}".rstrip("0")
    days = f"{value.days} day{'s' if value.days != 1 else ''} " if value.days else ""
    return f"{sign}{days}{clock}"
