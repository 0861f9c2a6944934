"""What a new `generate_sql` step is told about the candidates already rejected.

One line per rejection, oldest first: ``Rejected: <SQL on one line> -- <why>``.
The text is bounded, and it is cut at line boundaries, newest kept: a line is
never started in the middle, so the model never sees a fragment of SQL that
looks like a query of its own to copy. The newest rejection is always shown;
when even it does not fit, its SQL is shortened in the middle (`` ... ``) and
its reason is kept. Dropped older lines are counted in a first line.
"""

from __future__ import annotations

from collections.abc import Sequence

FEEDBACK_CHARS = 1200
"""The most characters of feedback a step is given."""

REASON_SHARE = 3
"""A reason may take at most 1/REASON_SHARE of the limit when a line must be shortened."""


def rejection_feedback(rejected: Sequence[tuple[str, str]], limit: int = FEEDBACK_CHARS) -> str:
    """The feedback for `rejected` ``(sql, reason)`` pairs, oldest first, in at most `limit`."""
    if not rejected:
        return ""
    lines = [_line(_one_line(sql), reason) for sql, reason in rejected]
    if len(lines[-1]) > limit:
        sql, reason = rejected[-1]
        lines[-1] = _shortened(_one_line(sql), reason, limit)
    kept = [lines[-1]]
    for line in reversed(lines[:-1]):
        more = [line, *kept]
        dropped = len(lines) - len(more)
        note = len(_dropped_note(dropped)) + 1 if dropped else 0
        if _size(more) + note > limit:
            break
        kept = more
    dropped = len(lines) - len(kept)
    if dropped and _size(kept) + len(_dropped_note(dropped)) + 1 <= limit:
        kept.insert(0, _dropped_note(dropped))
    return "\n".join(kept)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _line(sql: str, reason: str) -> str:
    return f"Rejected: {sql} -- {reason}"


def _size(lines: list[str]) -> int:
    return sum(len(line) for line in lines) + len(lines) - 1


def _dropped_note(count: int) -> str:
    return f"({count} earlier rejected candidate(s) not shown)"


def _shortened(sql: str, reason: str, limit: int) -> str:
    """One rejection in `limit` characters: its reason (capped) and the two ends of its SQL."""
    reason = _one_line(reason)
    cap = max(limit // REASON_SHARE, 4)
    if len(reason) > cap:
        reason = reason[: cap - 3] + "..."
    room = limit - len(_line(" ... ", reason))
    if room <= 0:
        return _line("", reason)[:limit]
    head, tail = room - room // 2, room // 2
    return _line(f"{sql[:head]} ... {sql[len(sql) - tail :]}", reason)
