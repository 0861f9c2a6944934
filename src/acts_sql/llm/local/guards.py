"""When a reply stops early: a verbatim loop, or the call's deadline.

Both are llama-cpp-python stopping criteria (called with all tokens so far,
prompt included); the project's own decoder calls them the same way.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


def repeating_tail(
    tokens: Sequence[int], *, min_block: int = 16, min_span: int = 32, max_period: int = 160
) -> tuple[int, int] | None:
    """``(period, copies)`` when `tokens` end in a block repeated verbatim, else None.

    A block of at least `min_block` tokens counts from its second copy; a
    shorter one only once its copies span `min_span` tokens (so that short
    legitimate repeats such as ``], [`` do not count). The shortest period wins.
    """
    length = len(tokens)
    for period in range(1, min(max_period, length // 2) + 1):
        copies = 2 if period >= min_block else -(-min_span // period)
        span = period * copies
        if span > length:
            continue
        tail = tokens[length - span :]
        if all(tail[i] == tail[i + period] for i in range(span - period)):
            return period, copies
    return None


class RepetitionGuard:
    """A llama-cpp-python stopping criterion: stop when the output repeats itself.

    Called with all tokens so far (prompt included) after each sampled token.
    When it fires, ``kept`` is the number of generated tokens before the
    repetition began (the first copy of the block is kept).
    """

    def __init__(self, prompt_tokens: int) -> None:
        self.prompt_tokens = prompt_tokens
        self.kept: int | None = None
        self.generated: list[int] = []

    def __call__(self, input_ids: npt.NDArray[np.intc], logits: Any) -> bool:
        generated = input_ids[self.prompt_tokens :].tolist()
        found = repeating_tail(generated)
        if found is None:
            return False
        period, copies = found
        self.generated = generated
        self.kept = len(generated) - period * (copies - 1)
        return True


class DeadlineGuard:
    """A llama-cpp-python stopping criterion: stop once `deadline` (``time.perf_counter``) passes.

    Checked after each sampled token; :attr:`fired` says it stopped the
    reply (the text so far is returned as it is).
    """

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.fired = False

    def __call__(self, input_ids: Any, logits: Any) -> bool:
        if time.perf_counter() >= self.deadline:
            self.fired = True
        return self.fired


class Stops(list[Callable[[Any, Any], bool]]):
    """Stopping criteria for llama-cpp-python: stop when any says so."""

    def __call__(self, input_ids: Any, logits: Any) -> bool:
        return any(criterion(input_ids, logits) for criterion in self)
