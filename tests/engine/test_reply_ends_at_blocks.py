"""The engine's raw rewrite and samples end at their ```sql blocks (`enough_blocks`); the
baselines keep whole replies. Scripted LLM (which stops where the local model does), real
SQLite; the local decoder's side is tests/llm/test_llm_local.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from acts_sql import CorrectionOptions, correct
from support import scripted, users_db

QUESTION = "List the names of all users."
TWO_BLOCKS = (
    "The column is misspelled:\n```sql\nSELECT name FROM users\n```\n"
    "To see one user only:\n```sql\nSELECT name FROM users WHERE id = 1\n```"
)


@pytest.fixture
def db(tmp_path: Path) -> str:
    return users_db(tmp_path)


@pytest.mark.parametrize(
    ("sql", "blocks"), [("SELECT nam FROM users", 1), ("SELECT 1; SELECT nam FROM users", 2)]
)
def test_the_gate_asks_for_as_many_blocks_as_the_user_wrote_statements(db, sql, blocks):
    llm = scripted({"correct": [TWO_BLOCKS] * 3})
    options = CorrectionOptions(method="acts", lexical_repairs=False)
    correct(db, QUESTION, sql, llm=llm, options=options)
    asked = [r.enough_blocks for r in llm.requests if r.purpose == "correct"]
    assert asked and set(asked) == {blocks}


def test_the_gate_reads_the_first_block_and_the_raw_baseline_both(db):
    acts = correct(
        db,
        QUESTION,
        "SELECT nam FROM users",
        llm=scripted({"correct": [TWO_BLOCKS] * 3}),
        options=CorrectionOptions(method="acts", lexical_repairs=False),
    )
    assert acts.sql.strip().rstrip(";") == "SELECT name FROM users"
    raw = scripted({"correct": [TWO_BLOCKS]})
    result = correct(
        db, QUESTION, "SELECT nam FROM users", llm=raw, options=CorrectionOptions(method="raw")
    )
    assert [r.enough_blocks for r in raw.requests] == [None]
    assert "WHERE id = 1" in result.sql
