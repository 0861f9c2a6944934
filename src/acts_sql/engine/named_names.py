"""A check that does not depend on the judge: a correction keeps what the question names.

When the question names a table or a column of the schema word for word, and the user's SQL
uses it too, both point at it: a correction that no longer mentions it at all answers a
different request (the issue "rows that appear in X or in the JSON array non_valid_cards",
answered by a query that never looks at `non_valid_cards`). The check is pure and
conservative:

- only schema names of at least `MIN_LENGTH` characters count (a name the schema lacks is
  the user's mistake, which the correction must drop; short names such as `id` are too
  common in prose);
- "mentions" is a whole-word match anywhere in the SQL text, string literals included (a
  name inside a JSON path or a `crosstab` text is kept);
- the same holds for the aggregates `AGGREGATES` (AVG, COUNT, SUM): one the question asks
  for by word ("average", "how many", "total") and the user's SQL calls must still be called
  (a correction of "the weekly average" that sums instead answers another question); MIN and
  MAX are left out, since `ORDER BY ... LIMIT 1` is a common right rewrite of them;
- a question that names none of the user's names gets `unknown`, which never blocks.

It gates acceptance: the evidence gate accepts no result that an agreeing candidate returns
while dropping a name (`acts_sql.engine.evidence_rule`), and a judge's "accept" stands only
when the SQL it would return keeps them (`acts_sql.engine.candidate_stage`). It never
removes a candidate from the ranking.

Its counterpart, **tables named** (`NamedNames.added`), weighs in the evidence rule only: a
candidate that reads a table of the schema that neither the question nor the user's SQL
names (a join the model adds out of habit, so that several of its samples agree on it) has
no vote there (`acts_sql.engine.evidence`); it stays in the ranking, and the judge, which
reads the issue, may still accept it. A table is named when its name, or each part of it
(split at ``_``), is a word of the question or of the user's SQL, a plural ending aside
(`teacher` names `teachers`, "order items" names `order_items`). Tables that share their
name with a column are left out (a mention cannot tell them apart), and in text-to-SQL mode,
where the first query is the model's own, nothing is checked.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from pydantic import BaseModel

from acts_sql.engine.result_checks import ShapeCheck

NAMES = "names kept"
MIN_LENGTH = 3
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")
AGGREGATES = {
    "AVG": re.compile(r"\b(average[sd]?|avg|mean)\b", re.IGNORECASE),
    "COUNT": re.compile(r"\b(counts?|how\s+many|number\s+of)\b", re.IGNORECASE),
    "SUM": re.compile(r"\b(sums?|totals?)\b", re.IGNORECASE),
}
"""An aggregate, and the words of a question that ask for it."""


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text or "")}


def _stem(word: str) -> str:
    """A word without a plural ending (`categories` -> `category`, `boxes` -> `box`)."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ses", "xes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def _named(table: str, stems: set[str]) -> bool:
    parts = [p for p in table.split("_") if p]
    return _stem(table) in stems or (bool(parts) and all(_stem(p) in stems for p in parts))


def _calls(sql: str, aggregate: str) -> bool:
    return re.search(rf"\b{aggregate}\s*\(", sql or "", re.IGNORECASE) is not None


class NamedNames(BaseModel):
    """The schema names (lower case) and the aggregates (`AVG(`) that both the question and
    the user's SQL use."""

    names: frozenset[str] = frozenset()
    aggregates: frozenset[str] = frozenset()
    unnamed_tables: frozenset[str] = frozenset()
    """The schema's tables (lower case) that neither the question nor the user's SQL names,
    less those that share their name with a column (`added`); empty without user SQL and in
    text-to-SQL mode."""

    @classmethod
    def of(
        cls,
        question: str,
        original_sql: str,
        schema_names: Mapping[str, Iterable[str]],
        *,
        tables: bool = True,
    ) -> NamedNames:
        """What `question` and `original_sql` both name; `tables`: also the tables neither
        names (False in text-to-SQL mode, where `original_sql` is the model's own)."""
        schema = {t.lower() for t in schema_names}
        for columns in schema_names.values():
            schema.update(c.lower() for c in columns)
        shared = _words(question) & _words(original_sql) & schema
        asked = [
            name
            for name, words in AGGREGATES.items()
            if words.search(question or "") and _calls(original_sql, name)
        ]
        return cls(
            names=frozenset(n for n in shared if len(n) >= MIN_LENGTH),
            aggregates=frozenset(asked),
            unnamed_tables=(
                _unnamed_tables(question, original_sql, schema_names) if tables else frozenset()
            ),
        )

    def dropped(self, sql: str) -> list[str]:
        """The names `sql` no longer mentions and the aggregates it no longer calls (as
        `AVG()`), sorted."""
        names = sorted(self.names - _words(sql))
        return names + [f"{a}()" for a in sorted(self.aggregates) if not _calls(sql, a)]

    def added(self, sql: str) -> list[str]:
        """The tables `sql` mentions (whole words) that neither the question nor the user's
        SQL names, sorted."""
        return sorted(self.unnamed_tables & _words(sql))

    def unnamed(self, sql: str) -> str | None:
        """Why `sql` has no vote in the evidence rule (it reads a table nobody named), or None."""
        added = self.added(sql)
        if not added:
            return None
        return f"reads {', '.join(added)}, which neither the question nor the user's SQL names"

    def check(self, sqls: Iterable[str]) -> ShapeCheck:
        """`fail` when any of `sqls` (the candidates returning one result) drops a name;
        `unknown` when the question names none of the user's names."""
        if not (self.names or self.aggregates):
            return ShapeCheck(
                name=NAMES, verdict="unknown", detail="the question names none of the SQL's names"
            )
        dropped = sorted({name for sql in sqls for name in self.dropped(sql)})
        if dropped:
            return ShapeCheck(
                name=NAMES,
                verdict="fail",
                detail=f"drops {', '.join(dropped)}, which the question and the user's SQL name",
            )
        kept = sorted(self.names) + [f"{a}()" for a in sorted(self.aggregates)]
        return ShapeCheck(name=NAMES, verdict="pass", detail=", ".join(kept))


def _unnamed_tables(
    question: str, original_sql: str, schema_names: Mapping[str, Iterable[str]]
) -> frozenset[str]:
    if not (original_sql or "").strip():
        return frozenset()
    columns = {c.lower() for cols in schema_names.values() for c in cols}
    words = _words(question) | _words(original_sql)
    stems = {_stem(part) for w in words for part in (w, *w.split("_")) if part}
    tables = {t.lower().rsplit(".", 1)[-1] for t in schema_names}
    return frozenset(t for t in tables if t not in columns and not _named(t, stems))
