"""Where a reply's ```sql blocks close: the end of what a caller reads of it.

A model asked for SQL in ```sql blocks writes the blocks and then, often,
prose about them that no caller reads. A request's ``enough_blocks`` says how
many blocks make the reply complete; :func:`end_of_blocks` finds where they end,
so that a backend can stop writing there, and :class:`BlocksClosed` is that
stop as a llama-cpp-python stopping criterion.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

_CLOSED_BLOCK = re.compile(rb"```[ \t]*sql[^\n`]*\n(.*?)```", re.IGNORECASE | re.DOTALL)


def end_of_blocks(text: bytes, blocks: int) -> int | None:
    """The offset just past the closing fence of the `blocks`-th non-empty ```sql block of
    `text`; None when fewer have closed."""
    if blocks < 1:
        return None
    closed = 0
    for found in _CLOSED_BLOCK.finditer(text):
        if found.group(1).strip():
            closed += 1
            if closed == blocks:
                return found.end()
    return None


def through_blocks(text: str, blocks: int | None) -> str:
    """`text` up to the end of its `blocks`-th non-empty ```sql block (all of it when it has
    fewer, or `blocks` is None): what a backend honouring ``enough_blocks`` returns."""
    if blocks is None:
        return text
    raw = text.encode("utf-8")
    end = end_of_blocks(raw, blocks)
    return text if end is None else raw[:end].decode("utf-8", errors="ignore")


class BlocksClosed:
    """A stopping criterion: the reply has closed `blocks` non-empty ```sql blocks.

    Called with all tokens so far (prompt included) after each written token;
    `detokenize` turns the reply's tokens into bytes. The text is kept between
    calls and rebuilt when the reply's tokens are no longer the ones it was
    built from (a steered reply forks back to an earlier token).
    """

    def __init__(
        self, prompt_tokens: int, blocks: int, detokenize: Callable[[Sequence[int]], bytes]
    ) -> None:
        self.prompt_tokens = prompt_tokens
        self.blocks = blocks
        self.detokenize = detokenize
        self.fired = False
        self._tokens: list[int] = []
        self._text = b""

    def __call__(self, input_ids: Any, logits: Any) -> bool:
        reply = _token_list(input_ids[self.prompt_tokens :])
        kept = len(self._tokens)
        if reply[:kept] != self._tokens:
            self._tokens, self._text, kept, self.fired = [], b"", 0, False
        written = reply[kept:]
        if written:
            self._tokens.extend(written)
            added = self.detokenize(written)
            self._text += added
            if b"`" in added:
                self.fired = end_of_blocks(self._text, self.blocks) is not None
        return self.fired


def _token_list(ids: Any) -> list[int]:
    return [int(t) for t in (ids.tolist() if hasattr(ids, "tolist") else ids)]
