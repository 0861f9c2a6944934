"""Prompt evaluation: what the KV cache already holds, and batches that stop at a deadline."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from acts_sql.errors import LLMDeadlineError

PACE_MIN_BATCH = 16
"""Batches shorter than this do not count towards the measured prompt pace."""


def reused_prefix(cached: Sequence[int], prompt: Sequence[int]) -> int:
    """How many tokens of `prompt` llama.cpp reuses from a KV cache holding `cached`.

    The longest common prefix; when it covers the whole prompt, the last
    token is evaluated again (its logits are needed to sample), so one less.
    """
    common = 0
    for a, b in zip(cached, prompt, strict=False):
        if a != b:
            break
        common += 1
    if common and common == len(prompt):
        return common - 1
    return common


class PromptDeadline(Exception):
    """Raised out of ``Llama.eval`` when a prompt cannot be evaluated before its deadline."""

    def __init__(self, evaluated: int, total: int, needed: float) -> None:
        super().__init__(f"deadline after {evaluated} of {total} prompt tokens")
        self.evaluated = evaluated
        self.total = total
        self.needed = needed
        """Estimated seconds the rest would have needed (0: unknown)."""


class Pace:
    """Seconds per prompt token at the fastest pace measured so far.

    The fastest, not an average: a call is given up only when even that pace
    cannot finish its prompt in time (the load on the machine, and so the
    pace, changes from call to call).
    """

    def __init__(self) -> None:
        self.per_token: float | None = None

    def record(self, tokens: int, seconds: float) -> None:
        if tokens < PACE_MIN_BATCH or seconds <= 0:
            return
        rate = seconds / tokens
        self.per_token = rate if self.per_token is None else min(self.per_token, rate)

    def estimate(self, tokens: int) -> float:
        return 0.0 if self.per_token is None else self.per_token * tokens


def evaluate_in_batches(
    eval_batch: Callable[[list[int]], Any],
    tokens: Sequence[int],
    n_batch: int,
    deadline: float,
    pace: Pace | None = None,
) -> None:
    """Evaluate `tokens` in batches of `n_batch` by `eval_batch`, unless the deadline forbids.

    Before each batch: when `deadline` (``time.perf_counter``) has passed, or
    the rest cannot be evaluated before it even at `pace` (the fastest seen), raise
    :class:`PromptDeadline`. Each batch's time is recorded in `pace`.
    """
    tokens = list(tokens)
    pace = pace or Pace()
    for start in range(0, len(tokens), max(1, n_batch)):
        now = time.perf_counter()
        needed = pace.estimate(len(tokens) - start)
        if now >= deadline or now + needed > deadline:
            raise PromptDeadline(start, len(tokens), needed)
        batch = tokens[start : start + n_batch]
        eval_batch(batch)
        pace.record(len(batch), time.perf_counter() - now)


def deadline_error(
    name: str, purpose: str, timeout_s: float, deadline: float, where: str
) -> LLMDeadlineError:
    elapsed = time.perf_counter() - (deadline - timeout_s)
    return LLMDeadlineError(
        f"wall time: {name} stopped the {purpose} call at its deadline ({timeout_s:.2f} s, "
        f"what was left of the run) {where}",
        purpose=purpose,
        seconds=timeout_s,
        elapsed=round(elapsed, 3),
    )
