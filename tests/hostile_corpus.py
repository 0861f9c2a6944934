"""Issue 37's hostile corpus (tests/fixtures/sql/safety/hostile.tsv), shared by the pure
guard tests (tests/sql) and the live effect tests (tests/integration)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

HOSTILE = Path(__file__).resolve().parent / "fixtures" / "sql" / "safety" / "hostile.tsv"
_ESCAPE = re.compile(r"\\(.)")
_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\"}


class Hostile(NamedTuple):
    line: int
    dialect: str
    sql: str

    def __str__(self) -> str:
        return f"{self.line}:{self.dialect}:{self.sql[:60]}"


def load_hostile(tmp: str = "/tmp/acts-hostile", victim: int = 0) -> list[Hostile]:
    """The hostile corpus, `{tmp}` replaced by `tmp` and `{victim}` by `victim` (a
    connection id)."""
    cases = []
    for number, raw in enumerate(HOSTILE.read_text(encoding="utf-8").splitlines(), start=1):
        if not raw.strip() or raw.startswith("#"):
            continue
        dialect, sql = raw.split("\t", 1)
        text = _ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(0)), sql)
        text = text.replace("{tmp}", tmp).replace("{victim}", str(victim))
        cases.append(Hostile(number, dialect, text))
    return cases
