"""A reply is complete once its ```sql blocks have closed (`enough_blocks`)."""

from __future__ import annotations

import pytest

from acts_sql.llm.base import LLMRequest, Message
from acts_sql.llm.scripted import ScriptedBackend
from acts_sql.llm.sql_fences import BlocksClosed, end_of_blocks, through_blocks

ONE = "The fix:\n```sql\nSELECT name FROM users\n```\nThis lists the names."
TWO = "First:\n```sql\nCREATE TABLE t (a INT)\n```\nThen:\n```SQL\nSELECT a FROM t;\n```\nDone."


@pytest.mark.parametrize(
    ("text", "blocks", "kept"),
    [
        (ONE, 1, "The fix:\n```sql\nSELECT name FROM users\n```"),
        (ONE, 2, ONE),  # fewer blocks than asked: all of it
        (TWO, 1, "First:\n```sql\nCREATE TABLE t (a INT)\n```"),
        (TWO, 2, TWO.removesuffix("\nDone.")),
        ("```sql\n\n```\n```sql\nSELECT 1\n```\nprose", 1, "```sql\n\n```\n```sql\nSELECT 1\n```"),
        ("```sql\nSELECT 1\n", 1, "```sql\nSELECT 1\n"),  # still open
        ("```python\nprint(1)\n```\ntext", 1, "```python\nprint(1)\n```\ntext"),
        (ONE, None, ONE),
    ],
)
def test_a_reply_is_kept_through_its_blocks(text, blocks, kept):
    assert through_blocks(text, blocks) == kept


def test_no_blocks_asked_finds_no_end():
    assert end_of_blocks(ONE.encode(), 0) is None


def pieces(text: str) -> tuple[list[int], dict[int, bytes]]:
    """`text` as one-character tokens."""
    table = {i + 1: ch.encode() for i, ch in enumerate(text)}
    return list(table), table


def test_the_criterion_fires_on_the_token_that_closes_the_last_block():
    tokens, table = pieces(TWO)
    prompt = [900, 901, 902]
    watch = BlocksClosed(len(prompt), 2, lambda ids: b"".join(table[t] for t in ids))
    fired_at = next(n for n in range(1, len(tokens) + 1) if watch(prompt + tokens[:n], None))
    assert TWO[:fired_at] == through_blocks(TWO, 2)


def test_the_criterion_rebuilds_its_text_when_the_reply_forks():
    tokens, table = pieces(ONE)
    table[999] = b"x"
    prompt = [900]
    watch = BlocksClosed(len(prompt), 1, lambda ids: b"".join(table[t] for t in ids))
    end = len(through_blocks(ONE, 1))
    assert watch(prompt + tokens[:end], None)
    # a fork replaced a token inside the block's fence: no block has closed any more
    forked = [*tokens[: end - 2], 999, tokens[end - 1]]
    assert not watch(prompt + forked, None)
    assert not watch(prompt + forked + tokens[end:], None)


def test_the_scripted_backend_stops_where_a_model_would():
    backend = ScriptedBackend({"correct": [TWO, TWO]})
    message = [Message(role="user", content="fix it")]
    cut = backend.complete(LLMRequest(purpose="correct", messages=message, enough_blocks=1))
    whole = backend.complete(LLMRequest(purpose="correct", messages=message))
    assert cut.text == "First:\n```sql\nCREATE TABLE t (a INT)\n```" and whole.text == TWO
    assert cut.usage.completion_tokens < whole.usage.completion_tokens
