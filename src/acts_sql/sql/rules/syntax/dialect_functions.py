"""Date and time functions of another dialect: YEAR() on SQLite, STRFTIME() on PostgreSQL, ...

MapleRepair's "function hallucination (date)" repairer, per dialect. Each
call of a date/time function the target engine lacks (a table per dialect
below) is read in a dialect where it is native and written in the target by
sqlglot: `STRFTIME('%Y', d)` becomes `TO_CHAR(CAST(d AS TIMESTAMP), 'YYYY')`
on PostgreSQL, `DATE_FORMAT(d, '%Y-%m')` becomes `STRFTIME('%Y-%m', d)` on
SQLite. Where sqlglot has no translation, a few are written here: on SQLite
`YEAR(d)`, `MONTH(d)`, `DAY(d)` and `EXTRACT(YEAR FROM d)` become
`CAST(STRFTIME('%Y', d) AS INTEGER)` (a number, so `= 2020` still compares
numbers), `NOW()` becomes `CURRENT_TIMESTAMP`, `DATE_TRUNC('month', d)`
becomes `STRFTIME('%Y-%m-01', d)`; `JULIANDAY(d)` becomes epoch days elsewhere.
Only the foreign calls change; applies only to a statement that fails, and
only when every foreign call it touches has a translation.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel

from acts_sql.sql._rewrite import BAD_SQL_ERRORS
from acts_sql.sql.dialects import Dialect, get_dialect
from acts_sql.sql.rules._tree import rewrite
from acts_sql.sql.rules.base import Repair, Rule, RuleInput, RuleOutcome, Stage

_MYSQL = (
    "year month day dayofmonth now curdate curtime date_format datediff date_add date_sub"
    " str_to_date timestampdiff unix_timestamp from_unixtime last_day dayofweek weekday quarter"
)
_NATIVE: dict[str, str] = {
    **dict.fromkeys(_MYSQL.split(), "mysql"),
    **dict.fromkeys(["strftime", "julianday", "datetime"], "sqlite"),
    **dict.fromkeys(["to_char", "date_part", "date_trunc", "age", "extract"], "postgres"),
    **dict.fromkeys(["getdate", "dateadd", "datepart"], "tsql"),
    **dict.fromkeys(["sysdate", "to_date"], "oracle"),
}
"""A dialect where each function is native (where sqlglot reads it with its meaning)."""

_ABSENT_WORDS: dict[str, str] = {
    "sqlite": "year month day dayofmonth now curdate curtime date_format extract date_part"
    " date_trunc timestamp_trunc to_char datediff dateadd date_add date_sub getdate sysdate"
    " str_to_date to_date timestampdiff age unix_timestamp from_unixtime last_day dayofweek"
    " weekday quarter datepart",
    "postgresql": "strftime julianday datetime curdate curtime date_format datediff dateadd"
    " date_add date_sub getdate sysdate str_to_date timestampdiff year month day dayofmonth"
    " unix_timestamp from_unixtime dayofweek weekday datepart",
    "mysql": "strftime julianday datetime to_char date_part date_trunc age getdate dateadd"
    " datepart to_date",
    "duckdb": "julianday datetime curdate curtime date_format getdate dateadd sysdate"
    " str_to_date timestampdiff unix_timestamp from_unixtime",
    "sqlserver": "strftime julianday datetime now curdate curtime date_format extract date_part"
    " to_char date_add date_sub sysdate str_to_date to_date timestampdiff age unix_timestamp",
    "oracle": "strftime julianday datetime now curdate curtime date_format datediff dateadd"
    " date_add date_sub getdate str_to_date timestampdiff year month day date_part date_trunc"
    " age datepart",
}
_ABSENT = {name: frozenset(words.split()) for name, words in _ABSENT_WORDS.items()}
"""Date/time functions each engine does not have."""

_CALL = re.compile(r"\s*([A-Za-z_]\w*)\s*\(")
_STRFTIME_PARTS = {
    "year": "%Y",
    "month": "%m",
    "day": "%d",
    "dayofmonth": "%d",
    "hour": "%H",
    "minute": "%M",
    "second": "%S",
    "dow": "%w",
    "doy": "%j",
    "epoch": "%s",
}
_TRUNCATED = {"year": "%Y-01-01", "month": "%Y-%m-01", "day": "%Y-%m-%d"}


class DialectFunctions(Rule):
    """Date and time functions the engine lacks, written as the engine's own."""

    name = "dialect_functions"
    stage = Stage.SYNTAX
    lexical = True

    def check(self, given: RuleInput) -> RuleOutcome | None:
        absent = _ABSENT.get(given.d.name)
        if given.error is None or not absent:
            return None
        fixed = rewrite(given, lambda tree: _translate_tree(tree, given.d, absent))
        if fixed is None:
            return None
        return RuleOutcome(repairs=[Repair(sql=fixed, detail=f"date functions for {given.d.name}")])


def _translate_tree(tree: exp.Expr, d: Dialect, absent: frozenset[str]) -> bool:
    """Replace every foreign call in `tree` (innermost first); False when none, or when one
    has no translation (a partial rewrite would only move the error)."""
    changed = False
    for node in reversed(list(tree.find_all(exp.Func))):
        name = _call_name(node, d)
        if name not in absent:
            continue
        new = _translated(node, name, d, absent)
        if new is None:
            return False
        node.replace(new)
        changed = True
    return changed


def _call_name(node: exp.Func, d: Dialect) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.this).lower()
    match = _CALL.match(d.generate(node))
    return match.group(1).lower() if match else ""


def _translated(node: exp.Func, name: str, d: Dialect, absent: frozenset[str]) -> exp.Expr | None:
    """`node` as the target writes it; None when neither sqlglot nor this module can."""
    manual = _MANUAL.get(d.name, {}).get(name)
    candidates: list[Callable[[], exp.Expr | None]] = []
    if manual is not None:
        candidates.append(lambda: manual(node))
    candidates.append(lambda: _via_source(node, name, d))
    for make in candidates:
        try:
            new = make()
        except BAD_SQL_ERRORS:
            continue
        if new is not None and not _foreign_inside(new, d, absent):
            return new
    return None


def _via_source(node: exp.Func, name: str, d: Dialect) -> exp.Expr | None:
    source = _NATIVE.get(name)
    if source is None or source == d.sqlglot_name:
        return None
    text = d.generate(node)
    reread = sqlglot.parse_one(f"SELECT {text}", read=source)
    written = reread.sql(dialect=d.sqlglot_name, unsupported_level=ErrorLevel.RAISE)
    back = sqlglot.parse_one(written, read=d.sqlglot_name)
    return back.expressions[0] if isinstance(back, exp.Select) else None


def _foreign_inside(node: exp.Expr, d: Dialect, absent: frozenset[str]) -> bool:
    return any(_call_name(f, d) in absent for f in node.find_all(exp.Func))


def _argument(node: exp.Func) -> exp.Expr:
    value = (node.expressions or [None])[0] if isinstance(node, exp.Anonymous) else node.this
    if not isinstance(value, exp.Expr):
        raise ValueError("no argument")
    return value.copy()


def _sqlite_part(part: str) -> Callable[[exp.Func], exp.Expr]:
    def make(node: exp.Func) -> exp.Expr:
        return _sqlite_strftime(_STRFTIME_PARTS[part], _argument(node), cast=True)

    return make


def _sqlite_strftime(fmt: str, value: exp.Expr, *, cast: bool) -> exp.Expr:
    call = exp.Anonymous(this="STRFTIME", expressions=[exp.Literal.string(fmt), value])
    return exp.Cast(this=call, to=exp.DataType.build("INTEGER")) if cast else call


def _sqlite_extract(node: exp.Func) -> exp.Expr | None:
    part = node.this.name.lower() if isinstance(node.this, exp.Expr) else ""
    if isinstance(node, exp.Anonymous):  # DATE_PART('year', d)
        first = node.expressions[0] if node.expressions else None
        part = first.name.lower() if isinstance(first, exp.Literal) else ""
        value = node.expressions[1].copy() if len(node.expressions) > 1 else None
    else:
        value = node.expression.copy() if isinstance(node.expression, exp.Expr) else None
    fmt = _STRFTIME_PARTS.get(part)
    if fmt is None or value is None:
        return None
    return _sqlite_strftime(fmt, value, cast=True)


def _sqlite_truncate(node: exp.Func) -> exp.Expr | None:
    unit = node.args.get("unit")
    part = (unit.name if isinstance(unit, exp.Expr) else str(unit or "")).lower()
    value = node.this
    if isinstance(node, exp.Anonymous) and len(node.expressions) == 2:
        part, value = node.expressions[0].name.lower(), node.expressions[1]
    fmt = _TRUNCATED.get(part)
    if fmt is None or not isinstance(value, exp.Expr):
        return None
    return _sqlite_strftime(fmt, value.copy(), cast=False)


def _epoch_days(d: Dialect) -> Callable[[exp.Func], exp.Expr]:
    """JULIANDAY(x): days since noon, 24 November 4714 BC, from the epoch seconds."""
    seconds = {
        "postgresql": "EXTRACT(EPOCH FROM CAST({x} AS TIMESTAMP))",
        "mysql": "UNIX_TIMESTAMP({x})",
        "duckdb": "EPOCH(CAST({x} AS TIMESTAMP))",
    }[d.name]

    def make(node: exp.Func) -> exp.Expr:
        value = d.generate(_argument(node))
        text = f"({seconds.format(x=value)} / 86400.0 + 2440587.5)"
        return sqlglot.parse_one(text, read=d.sqlglot_name)

    return make


_MANUAL: dict[str, dict[str, Callable[[exp.Func], exp.Expr | None]]] = {
    "sqlite": {
        **{part: _sqlite_part(part) for part in ("year", "month", "day", "dayofmonth")},
        "extract": _sqlite_extract,
        "date_part": _sqlite_extract,
        "date_trunc": _sqlite_truncate,
        "timestamp_trunc": _sqlite_truncate,
        "now": lambda node: exp.CurrentTimestamp(),
    },
    **{
        name: {"julianday": _epoch_days(get_dialect(name))}
        for name in ("postgresql", "mysql", "duckdb")
    },
}
