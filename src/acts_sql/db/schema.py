"""Schema text for prompts: DDL plus a few sample rows, most relevant tables first."""

from __future__ import annotations

import re
from collections.abc import Sequence

from acts_sql.db.executor import TableInfo

MAX_CELL_CHARS = 30
_WORD = re.compile(r"\w+")


def render_schema(
    tables: list[TableInfo], max_chars: int = 6000, focus_terms: Sequence[str] = ()
) -> str:
    """Each table's DDL and sample rows, within ``max_chars`` characters.

    Tables whose name or columns match ``focus_terms`` come first (stable
    otherwise). When the text is too long, sample rows are dropped first
    (least relevant tables first), then whole tables, which a closing
    ``-- ... N more tables omitted`` line names.
    """
    ordered = order_tables(tables, focus_terms)
    ddls = [_ddl(table) for table in ordered]
    samples = [_sample(table) for table in ordered]
    for with_samples in range(len(ordered), -1, -1):
        blocks = [
            ddl + ("\n" + sample if i < with_samples and sample else "")
            for i, (ddl, sample) in enumerate(zip(ddls, samples, strict=True))
        ]
        text = "\n\n".join(blocks)
        if len(text) <= max_chars:
            return text
    for kept in range(len(ordered) - 1, 0, -1):
        text = "\n\n".join(ddls[:kept])
        note = _omitted_note([t.name for t in ordered[kept:]], max_chars - len(text) - 2)
        if note is not None:
            return text + "\n\n" + note
    if not ordered:
        return ""
    note = (_omitted_note([t.name for t in ordered[1:]], max_chars) or "") if ordered[1:] else ""
    room = max_chars - (len(note) + 2 if note else 0)
    head = ddls[0] if len(ddls[0]) <= room else ddls[0][: max(room - 1, 0)] + "…"
    return head + ("\n\n" + note if note else "")


def order_tables(tables: list[TableInfo], focus_terms: Sequence[str]) -> list[TableInfo]:
    """``tables`` with those matching ``focus_terms`` first, best match first.

    A table scores by its name and column names containing a focus word, and
    by sample values: a focus term equal to a whole value (a literal of the
    SQL, say 'Electronics') or a focus word equal to a word of a value.
    """
    words = {w.lower() for term in focus_terms for w in _WORD.findall(term) if len(w) >= 3}
    phrases = {_phrase(term) for term in focus_terms} - {""}
    if not words and not phrases:
        return list(tables)
    scored = [(-_score(table, words, phrases), i, table) for i, table in enumerate(tables)]
    return [table for _, _, table in sorted(scored, key=lambda item: (item[0], item[1]))]


def _score(table: TableInfo, words: set[str], phrases: set[str]) -> int:
    score = 2 * sum(_matches(word, table.name) for word in words)
    for column in table.columns:
        score += sum(_matches(word, column.name) for word in words)
    values = [str(cell) for row in table.sample_rows for cell in row if isinstance(cell, str)]
    lowered = {value.strip().lower() for value in values}
    score += 3 * len(phrases & lowered)
    value_words = {w.lower() for value in values for w in _WORD.findall(value) if len(w) >= 3}
    score += len(words & value_words)
    return score


def _phrase(term: str) -> str:
    """A focus term as a whole value: quotes stripped, lower case."""
    return term.strip().strip("'\"`").strip().lower()


def _matches(word: str, identifier: str) -> bool:
    ident = identifier.lower()
    if word in ident:
        return True
    singular = word[:-1] if word.endswith("s") and len(word) > 3 else word
    return singular in ident


def _ddl(table: TableInfo) -> str:
    ddl = table.ddl.strip()
    return ddl if ddl.endswith(";") else ddl + ";"


def _sample(table: TableInfo) -> str:
    """Sample rows as SQL comments: header, then one compact line per row."""
    if not table.sample_rows:
        return ""
    shown = len(table.sample_rows)
    if table.row_count is None:
        head = f"-- {table.name}: first {shown} row(s):"
    else:
        head = f"-- {table.name}: {table.row_count} row(s), first {shown}:"
    lines = [head]
    if table.columns:
        lines.append("-- " + " | ".join(col.name for col in table.columns))
    for row in table.sample_rows:
        lines.append("-- " + " | ".join(_cell(value) for value in row))
    return "\n".join(lines)


def _cell(value: object) -> str:
    if value is None:
        return "NULL"
    text = f"'{value}'" if isinstance(value, str) else str(value)
    text = text.replace("\n", " ")
    return text if len(text) <= MAX_CELL_CHARS else text[: MAX_CELL_CHARS - 1] + "…"


def _omitted_note(names: list[str], room: int) -> str | None:
    """The closing note, with the omitted names if they fit in ``room``."""
    bare = f"-- ... {len(names)} more tables omitted"
    full = f"{bare}: {', '.join(names)}"
    if len(full) <= room:
        return full
    return bare if len(bare) <= room else None
