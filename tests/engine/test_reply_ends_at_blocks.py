"""The evidence gate's samples end at their ```sql blocks (`enough_blocks`); the raw rewrite
and the baselines keep whole replies. Scripted LLM (which stops where the local model does),
real SQLite; the local decoder's side is tests/llm/test_llm_local.py."""

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
ACTS = CorrectionOptions(method="acts", candidates=3, lexical_repairs=False)


@pytest.fixture
def db(tmp_path: Path) -> str:
    return users_db(tmp_path)


@pytest.mark.parametrize(
    ("sql", "blocks"), [("SELECT nam FROM users", 1), ("SELECT 1; SELECT nam FROM users", 2)]
)
def test_samples_ask_for_as_many_blocks_as_the_user_wrote_statements(db, sql, blocks):
    llm = scripted({"correct": [TWO_BLOCKS] * 3})
    correct(db, QUESTION, sql, llm=llm, options=ACTS)
    raw, *samples = [r for r in llm.requests if r.purpose == "correct"]
    assert raw.seed is None and raw.enough_blocks is None
    assert samples and {(r.seed is not None, r.enough_blocks) for r in samples} == {(True, blocks)}


def test_samples_read_their_first_block_and_the_raw_rewrite_both(db):
    acts = correct(
        db,
        QUESTION,
        "SELECT nam FROM users",
        llm=scripted({"correct": [TWO_BLOCKS] * 3}),
        options=ACTS,
    )
    by_origin = {c["origin"]: c["sql"] for c in acts.candidates}
    assert "WHERE id = 1" in by_origin["raw"]
    assert by_origin["raw:sample"].strip().rstrip(";") == "SELECT name FROM users"
    raw = scripted({"correct": [TWO_BLOCKS]})
    alone = correct(
        db, QUESTION, "SELECT nam FROM users", llm=raw, options=CorrectionOptions(method="raw")
    )
    assert [r.enough_blocks for r in raw.requests] == [None]
    assert alone.sql == by_origin["raw"]
