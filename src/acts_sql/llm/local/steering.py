"""Steering a reply away from values it must not repeat (``LLMRequest.avoid``).

A candidate pool asks for SQL the run has not dropped yet, and the prompt
lists what was dropped; a small model writes it again anyway (with the 0.5B,
182 of the 429 SQL-writing calls of 24 acts tasks repeated a SQL the run had
already refused, rejected or seen fail, each a paid call thrown away). Told by
the prompt is not enough, so the decoder takes care of it:

- while the reply is written, every chosen token is recorded with the best
  few other tokens of its row (:class:`RecordingChooser`);
- a stopping criterion watches the reply's JSON string field (``"sql"``); as
  soon as the string closes, its value is compared with the values to avoid
  (whitespace, case and a trailing ``;`` aside; :class:`ValueWatch`), and a
  repeat stops the reply there (the rest would be a rationale for SQL that is
  thrown away);
- the reply is then *forked*: at the token of the repeated value where the
  model was least sure (the smallest gap between the chosen token's logit and
  the best other one the grammar allows, at most :data:`MAX_MARGIN` below,
  :func:`fork_point`), the other token is taken, and writing goes on from
  there with the KV cache of everything before it kept. That is the most
  likely reply that leaves the repeated path.
  At most :data:`MAX_FORKS` forks a call; after them the reply is written to
  its end, repeat or not (the pool then drops it, as before).

A greedy reply keeps being greedy after the fork; a sample draws on with a
seed of its own. A reply that repeats nothing is written exactly as without
steering. The tokens written on abandoned paths count in the call's usage.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

MAX_FORKS = 2
"""Forks a call may take; each costs the tokens from the fork point to the value's end."""
TOP_ALTERNATIVES = 4
"""Other tokens recorded per position (the fork takes the best one the grammar allows)."""
MAX_MARGIN = 6.0
"""A fork takes a token at most this far below the chosen one in logits (about 400 times
less likely): past that, the model is sure, and the other token would be noise."""


def normalized(value: str) -> str:
    """A value as compared with the ones to avoid: whitespace, case, trailing ``;`` aside."""
    return " ".join(value.split()).casefold().rstrip(";").rstrip()


class Steerable(Protocol):
    """A chooser whose grammar can be advanced and asked about one token."""

    def choose(self, logits: npt.NDArray[np.float32], best: int | None = None) -> int: ...

    def accept(self, token: int) -> None: ...

    def allows(self, token: int, logit: float) -> bool: ...


@dataclass(frozen=True)
class Step:
    """One written token, its logit, and the best other tokens of its row (best first)."""

    token: int
    logit: float
    alternatives: tuple[tuple[int, float], ...] = ()


class RecordingChooser:
    """A chooser that records each choice with its row's best other tokens."""

    def __init__(self, inner: Steerable, steps: list[Step] | None = None) -> None:
        self.inner = inner
        self.steps: list[Step] = steps if steps is not None else []

    def choose(self, logits: npt.NDArray[np.float32], best: int | None = None) -> int:
        import numpy as np

        token = self.inner.choose(logits, best)
        count = min(TOP_ALTERNATIVES + 1, logits.shape[0])
        top = np.argpartition(logits, -count)[-count:]
        others = sorted(
            ((int(t), float(logits[t])) for t in top if int(t) != token and np.isfinite(logits[t])),
            key=lambda pair: -pair[1],
        )
        self.steps.append(Step(token, float(logits[token]), tuple(others[:TOP_ALTERNATIVES])))
        return token


def value_span(text: bytes, key: bytes) -> tuple[int, int] | None:
    """Byte offsets ``(start, end)`` of the JSON string value of `key` in `text` once its
    closing quote is written (``end`` is the quote's offset), else None."""
    found = re.search(rb'"' + re.escape(key) + rb'"\s*:\s*"', text)
    if found is None:
        return None
    at = found.end()
    while at < len(text):
        char = text[at]
        if char == 0x5C:  # a backslash escapes the next character
            at += 2
            continue
        if char == 0x22:
            return found.end(), at
        at += 1
    return None


def decoded(raw: bytes) -> str:
    """A JSON string's content as text (escapes resolved where they are valid)."""
    try:
        value = json.loads(b'"' + raw + b'"')
    except ValueError:
        return raw.decode("utf-8", errors="ignore")
    return value if isinstance(value, str) else str(value)


class ValueWatch:
    """A stopping criterion: the reply's `key` string is complete and is a value to avoid.

    Checks once per written token until the string closes, then never again.
    """

    def __init__(self, key: str, avoided: Iterable[str], text: Callable[[], bytes]) -> None:
        self.key = key.encode("utf-8")
        self.avoided = {normalized(v) for v in avoided if v.strip()}
        self.text = text
        self.done = False
        self.span: tuple[int, int] | None = None
        """Where the repeated value is in the reply, when it repeats one."""

    def __call__(self, input_ids: Any, logits: Any) -> bool:
        if self.done:
            return False
        text = self.text()
        span = value_span(text, self.key)
        if span is None:
            return False
        self.done = True
        start, end = span
        if normalized(decoded(text[start:end])) in self.avoided:
            self.span = span
            return True
        return False


def token_offsets(tokens: Sequence[int], piece: Callable[[int], bytes]) -> list[int]:
    """The byte offset where each token starts, and the text's length at the end."""
    offsets = [0]
    for token in tokens:
        offsets.append(offsets[-1] + len(piece(token)))
    return offsets


@dataclass(frozen=True)
class Fork:
    position: int
    token: int


def fork_point(
    steps: Sequence[Step],
    tokens: Sequence[int],
    span: tuple[int, int],
    piece: Callable[[int], bytes],
    chooser_at: Callable[[Sequence[int]], Steerable],
    tried: set[int],
    is_eog: Callable[[int], bool],
) -> Fork | None:
    """Where to leave the repeated value: its least certain token with an other token the
    grammar allows there (`chooser_at(prefix)`: a chooser advanced past `prefix`), that
    does not end the string; None when no position qualifies."""
    start, end = span
    offsets = token_offsets(tokens, piece)
    options: dict[int, list[tuple[int, float]]] = {}
    for i in range(min(len(tokens), len(steps))):
        if offsets[i] < end and offsets[i + 1] > start and i not in tried:
            step = steps[i]
            kept = [
                (token, logit)
                for token, logit in step.alternatives
                if step.logit - logit <= MAX_MARGIN and _continues_string(token, piece, is_eog)
            ]
            if kept:
                options[i] = kept
    # the least sure first: the smallest lead of the chosen token over a usable other one
    for position in sorted(options, key=lambda i: (steps[i].logit - options[i][0][1], i)):
        chooser = chooser_at(tokens[:position])
        for token, logit in options[position]:
            if chooser.allows(token, logit):
                return Fork(position, token)
    return None


def _continues_string(
    token: int, piece: Callable[[int], bytes], is_eog: Callable[[int], bool]
) -> bool:
    """Whether `token` keeps the JSON string open (no unescaped quote, not the end)."""
    if is_eog(token):
        return False
    text = piece(token).replace(b'\\"', b"")
    return b'"' not in text


@dataclass
class Steering:
    """One call's steering: where the next attempt starts, and what the forks cost.

    An attempt writes the reply from its first tokens (`forced`: the part of the
    abandoned reply before the fork, then the other token); `history` holds their
    recorded steps, so a later fork can go back before an earlier one.
    """

    avoid: Sequence[str] = ()
    forks: int = 0
    written: int = 0
    """Tokens the model wrote in all, abandoned paths included."""
    forced: list[int] = field(default_factory=list)
    history: list[Step] = field(default_factory=list)
    tried: set[int] = field(default_factory=set)

    @property
    def armed(self) -> bool:
        """Whether this attempt is watched (a fork is still allowed)."""
        return bool(self.avoid) and self.forks < MAX_FORKS

    def count(self, reply_tokens: int) -> None:
        """Add an attempt's new tokens (the forced ones but the last were written before)."""
        self.written += reply_tokens - max(len(self.forced) - 1, 0)

    def fork(self, fork: Fork | None, tokens: Sequence[int], steps: Sequence[Step]) -> bool:
        """Set up the next attempt at `fork`; False when there is none."""
        if fork is None:
            return False
        self.forks += 1
        self.tried.add(fork.position)
        self.forced = [*tokens[: fork.position], fork.token]
        self.history = [*steps[: fork.position], Step(fork.token, 0.0)]
        return True
