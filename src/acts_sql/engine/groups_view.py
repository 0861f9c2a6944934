"""The judge's view of a pool: result groups side by side, labelled A, B, ...

Each group shows how many candidates agree on it (votes over the run), where
they came from, a representative SQL, its token-level diff against the
user's SQL, its first rows, and the rows it adds and removes relative to the
user's result. Groups are listed largest first, at most MAX_GROUPS of them.
"""

from __future__ import annotations

import json

from pydantic import BaseModel

from acts_sql.engine.candidates import CandidateBook
from acts_sql.engine.fingerprint import ResultShape, RowDelta, row_delta
from acts_sql.sql.sqldiff import token_diff

MAX_GROUPS = 4
LABELS = "ABCDEFGH"
ROWS_SHOWN = 4


class GroupsView(BaseModel):
    """What the judge is shown, and which label means which group."""

    text: str
    labels: dict[str, str]
    """Label (A, B, ...) -> group id (g1, ...)."""

    def group_of(self, label: str | None) -> str | None:
        if label is None:
            return next(iter(self.labels.values())) if len(self.labels) == 1 else None
        return self.labels.get(label.strip().upper())


def order_groups(book: CandidateBook, group_ids: list[str]) -> list[str]:
    """Largest agreeing group first; on a tie, the one seen first."""
    first_seen = {g: i for i, g in enumerate(group_ids)}
    return sorted(dict.fromkeys(group_ids), key=lambda g: (-book.groups[g].votes, first_seen[g]))


def present_groups(
    book: CandidateBook,
    group_ids: list[str],
    *,
    original_sql: str,
    original_shape: ResultShape | None,
    dialect: str,
    show_results: bool = True,
) -> GroupsView:
    """The groups as prompt text (see the module doc)."""
    ordered = order_groups(book, group_ids)[:MAX_GROUPS]
    total = sum(book.groups[g].votes for g in ordered)
    blocks, labels = [], {}
    for label, group_id in zip(LABELS, ordered, strict=False):
        labels[label] = group_id
        blocks.append(
            _group_block(
                book,
                label,
                group_id,
                total,
                original_sql=original_sql,
                original_shape=original_shape,
                dialect=dialect,
                show_results=show_results,
            )
        )
    return GroupsView(text="\n".join(blocks), labels=labels)


def _group_block(
    book: CandidateBook,
    label: str,
    group_id: str,
    total: int,
    *,
    original_sql: str,
    original_shape: ResultShape | None,
    dialect: str,
    show_results: bool,
) -> str:
    group = book.groups[group_id]
    members = book.members(group_id)
    rep = book.representative(group_id)
    origins = ", ".join(dict.fromkeys(m.origin for m in members))
    lines = [f"Group {label}: {group.votes} of {total} candidate(s) agree (from: {origins})"]
    lines.append("  SQL: " + " ".join(rep.sql.split()))
    if original_sql.strip():
        lines.append("  change from the user's SQL: " + token_diff(original_sql, rep.sql, dialect))
    if not show_results:
        lines.append("  result: (not shown in this configuration)")
        return "\n".join(lines)
    result = rep.result
    lines.append(
        f"  result: {result.row_count}{'+' if result.truncated else ''} row(s); "
        f"columns: {', '.join(result.columns) or '-'}"
    )
    for row in result.rows[:ROWS_SHOWN]:
        lines.append("    " + json.dumps(row, default=str, ensure_ascii=False)[:160])
    if rep.shape is not None:
        delta = row_delta(rep.shape, original_shape)
        if delta.comparable:
            lines.append("  against the user's result: " + _delta_text(delta))
    return "\n".join(lines)


def _delta_text(delta: RowDelta) -> str:
    if not delta.added_count and not delta.removed_count:
        return "the same rows"
    parts = []
    if delta.removed_count:
        parts.append(f"{delta.removed_count} row(s) removed, e.g. {', '.join(delta.removed)}")
    if delta.added_count:
        parts.append(f"{delta.added_count} row(s) added, e.g. {', '.join(delta.added)}")
    return "; ".join(parts)
