"""The project's decoder: llama-cpp-python's loop, lean, with prompt lookup.

:func:`decode_greedy` writes what ``Llama.create_completion`` writes at
temperature 0 from the same logits (the same stop rules: end-of-generation
token, stop strings, ``max_tokens``, stopping criteria checked after each
token), with less Python per token, and, given a drafter, several tokens per
model evaluation: the draft is evaluated in one batch with logits for every
position and the longest prefix greedy decoding confirms is kept
(:func:`~acts_sql.llm.local.lookup.accept_prefix`); the KV cells of the
rejected rest are dropped. On this machine's 2 cores a batch of 4 costs 2.4x
a single token and a batch of 8 4x, so a reply that copies its prompt is
written up to twice as fast. The evaluation primitives come from an
:class:`Engine` (llama.cpp's in :class:`~acts_sql.llm.local.engine.LlamaEngine`;
a stand-in in the unit tests). Given a sampling chooser
(:class:`~acts_sql.llm.local.sampling.SampleChooser`) and no drafter, the same
loop writes a sample instead of the greedy reply.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from acts_sql.llm.local.lookup import DraftGate, DraftLength, NgramDrafter, accept_prefix

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

Criterion = Callable[[Any, Any], bool]


class Engine(Protocol):
    """What the decoder needs of a model: evaluate, roll back, read tokens."""

    @property
    def n_tokens(self) -> int: ...

    def decode(self, tokens: Sequence[int]) -> npt.NDArray[np.float32]: ...

    def truncate(self, n_tokens: int) -> None: ...

    def is_eog(self, token: int) -> bool: ...

    def piece(self, token: int) -> bytes: ...


class Chooser(Protocol):
    """The greedy token of a row of logits (under a grammar, which it advances)."""

    def choose(self, logits: npt.NDArray[np.float32], best: int | None = None) -> int: ...


class Argmax:
    """Greedy choice without a grammar."""

    def choose(self, logits: npt.NDArray[np.float32], best: int | None = None) -> int:
        import numpy as np

        return int(np.argmax(logits)) if best is None else best

    def accept(self, token: int) -> None:
        """Nothing to advance without a grammar."""

    def allows(self, token: int, logit: float) -> bool:
        return True


def _multibyte_pending(text: bytes, pending: int) -> int:
    """llama-cpp-python's count of tokens still to come for a UTF-8 character cut in two."""
    for index, char in enumerate(text[-3:]):
        k = 3 - index
        for num, pattern in ((2, 192), (3, 224), (4, 240)):
            if num > k and pattern & char == pattern:
                pending = num - k
    return pending


@dataclass
class Transcript:
    """The reply so far, and llama-cpp-python's rules for where it ends."""

    prompt: Sequence[int]
    max_tokens: int
    piece: Callable[[int], bytes]
    is_eog: Callable[[int], bool]
    stop: Sequence[bytes] = ()
    criteria: Criterion | None = None
    tokens: list[int] = field(default_factory=list)
    text: bytes = b""
    finish: str | None = None
    """``stop`` (end of generation, stop string, a criterion) or ``length``."""
    _pending: int = 0
    _ids: Any = None

    def push(self, token: int) -> bool:
        """Add the next greedy token; True when the reply ends there."""
        if self.is_eog(token):
            self.finish = "stop"
            return True
        self.tokens.append(token)
        self.text += self.piece(token)
        self._pending = _multibyte_pending(self.text, self._pending)
        if self._pending > 0:
            self._pending -= 1
        else:
            found = [s for s in self.stop if s in self.text]
            if found:
                self.text = self.text[: self.text.index(found[0])]
                self.finish = "stop"
                return True
            if len(self.tokens) >= self.max_tokens:
                self.finish = "length"
                return True
        if self.criteria is not None and self.criteria(self._all_ids(), None):
            self.finish = "stop"
            return True
        return False

    def _all_ids(self) -> npt.NDArray[np.intc]:
        import numpy as np

        if self._ids is None:
            self._ids = np.zeros(len(self.prompt) + self.max_tokens + 8, dtype=np.intc)
            self._ids[: len(self.prompt)] = self.prompt
        end = len(self.prompt) + len(self.tokens)
        self._ids[end - 1] = self.tokens[-1]
        return self._ids[:end]  # type: ignore[no-any-return]

    @property
    def left(self) -> int:
        return self.max_tokens - len(self.tokens)


@dataclass
class DecodeStats:
    """What a decoding did: model evaluations, drafted and accepted tokens, step times."""

    steps: int = 0
    drafted: int = 0
    accepted: int = 0
    step_seconds: list[tuple[int, float]] = field(default_factory=list)
    """(tokens in the batch, seconds) of each evaluation."""


def decode_greedy(
    engine: Engine,
    first: npt.NDArray[np.float32],
    transcript: Transcript,
    chooser: Chooser,
    drafter: NgramDrafter | None = None,
    length: DraftLength | None = None,
    on_step: Callable[[int, float], None] | None = None,
    gate: DraftGate | None = None,
) -> DecodeStats:
    """Write greedy tokens into `transcript` until it ends, starting from the logits `first`.

    With a `drafter`, each evaluation also verifies a draft of up to
    ``length.value`` tokens, as much of it as the `gate` finds pays. The
    engine's KV cache ends holding the prompt and the tokens written.
    """
    stats = DecodeStats()
    length = length or DraftLength()
    gate = gate or DraftGate()
    token = chooser.choose(first[0])
    while not transcript.push(token):
        if drafter is not None:
            drafter.append(token)
        limit = min(length.value, transcript.left - 1)
        draft = drafter.draft(limit) if drafter is not None else []
        fresh = drafter.fresh if drafter is not None else True
        if draft:
            draft = draft[: gate.length(fresh, len(draft))]
        base = engine.n_tokens
        started = time.perf_counter()
        rows = engine.decode([token, *draft])
        seconds = time.perf_counter() - started
        stats.steps += 1
        stats.step_seconds.append((len(draft) + 1, seconds))
        gate.record_step(len(draft) + 1, seconds)
        if on_step is not None:
            on_step(len(draft) + 1, seconds)

        def choose(index: int, rows: Any = rows) -> int:
            return chooser.choose(rows[index])

        accepted, following = _verify(draft, choose, transcript, drafter)
        stats.drafted += len(draft)
        stats.accepted += accepted
        gate.record_draft(fresh, len(draft), accepted)
        length.update(len(draft), accepted)
        if accepted < len(draft):
            engine.truncate(base + 1 + accepted)
        if following is None:
            break
        token = following
    return stats


def _verify(
    draft: Sequence[int],
    choose: Callable[[int], int],
    transcript: Transcript,
    drafter: NgramDrafter | None,
) -> tuple[int, int | None]:
    """Accept the confirmed draft tokens into `transcript`: ``(accepted, next token)``,
    the next token None when the reply ended on an accepted one."""
    ended: list[int] = []

    def checked(index: int) -> int:
        if index > 0:  # draft[index - 1] was confirmed: it is part of the reply now
            if drafter is not None:
                drafter.append(draft[index - 1])
            if transcript.push(draft[index - 1]):
                ended.append(index)
                raise _Ended
        return choose(index)

    try:
        return accept_prefix(draft, checked)
    except _Ended:
        return ended[0], None


class _Ended(Exception):
    """The reply ended inside a draft."""
