"""Reading the SQL out of a raw reply: every ```sql block, without the label lines a small
model copies from the prompt ("Put each statement ... in its own ```sql code block"), or
the fence's tag written again on the block's first line."""

from __future__ import annotations

import pytest

from acts_sql.agent.single_call import sql_blocks

CASES = [
    # id, reply, statements
    ("plain", "```sql\nSELECT 1;\n```", ["SELECT 1"]),
    (
        "a label line",
        "```sql\n-- SQL code block 1\nSELECT name FROM t\n```",
        ["SELECT name FROM t"],
    ),
    (
        "two labels, two blocks",
        "```sql\n-- SQL code block 1\nSELECT 1\n```\n```sql\n-- Statement 2:\nSELECT 2\n```",
        ["SELECT 1", "SELECT 2"],
    ),
    (
        "a real comment stays",
        "```sql\n-- Step 1: the names\nSELECT name FROM t\n```",
        ["-- Step 1: the names\nSELECT name FROM t"],
    ),
    (
        "a comment after the label stays",
        "```sql\n-- Query 1\n-- active users only\nSELECT 1\n```",
        ["-- active users only\nSELECT 1"],
    ),
    ("a label and nothing else is no statement", "```sql\n-- SQL code block 1\n```", []),
    (
        "a label inside the statement stays",
        "```sql\nSELECT 1\n-- SQL code block 1\n```",
        ["SELECT 1\n-- SQL code block 1"],
    ),
    ("an unclosed last block counts", "text\n```sql\n-- solution\nSELECT 3", ["SELECT 3"]),
    ("the fence's tag written again", "```sql\nsql\nSELECT 1\n```", ["SELECT 1"]),
    ("... in capitals, before a label", "```sql\nSQL \n-- Query 1\nSELECT 1\n```", ["SELECT 1"]),
    ("a column named sql stays", "```sql\nsql, id FROM t\n```", ["sql, id FROM t"]),
]


@pytest.mark.parametrize(("reply", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_sql_blocks(reply: str, expected: list[str]) -> None:
    assert sql_blocks(reply) == expected
