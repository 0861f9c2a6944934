"""A check that does not depend on the judge: a correction keeps the names the question gives.

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
- a question that names none of the user's names gets `unknown`, which never blocks.

It gates acceptance: the evidence gate accepts no result that an agreeing candidate returns
while dropping a name (`acts_sql.engine.evidence_rule`), and a judge's "accept" stands only
when the SQL it would return keeps them (`acts_sql.engine.candidate_stage`). It never
removes a candidate from the ranking.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from pydantic import BaseModel

from acts_sql.engine.result_checks import ShapeCheck

NAMES = "names kept"
MIN_LENGTH = 3
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text or "")}


class NamedNames(BaseModel):
    """The schema names that both the question and the user's SQL use (lower case)."""

    names: frozenset[str] = frozenset()

    @classmethod
    def of(
        cls, question: str, original_sql: str, schema_names: Mapping[str, Iterable[str]]
    ) -> NamedNames:
        schema = {t.lower() for t in schema_names}
        for columns in schema_names.values():
            schema.update(c.lower() for c in columns)
        shared = _words(question) & _words(original_sql) & schema
        return cls(names=frozenset(n for n in shared if len(n) >= MIN_LENGTH))

    def dropped(self, sql: str) -> list[str]:
        """The names `sql` no longer mentions, sorted."""
        return sorted(self.names - _words(sql))

    def check(self, sqls: Iterable[str]) -> ShapeCheck:
        """`fail` when any of `sqls` (the candidates returning one result) drops a name;
        `unknown` when the question names none of the user's names."""
        if not self.names:
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
        return ShapeCheck(name=NAMES, verdict="pass", detail=", ".join(sorted(self.names)))
