"""Sampling at a temperature for the project's decoder: llama.cpp's chain, on the top tokens.

A request with a temperature above 0 (the samples of a candidate pool) was
written by llama-cpp-python's own loop, whose sampler chain applies the JSON
grammar to the whole vocabulary (151,936 tokens for Qwen) before it draws:
with the 1.5B model the samples of the BIRD-CRITIC runs were written at about
6 tokens/s, the greedy answers of the same pools at 11-13.

:class:`SampleChooser` draws from the distribution of llama-cpp-python's
default chain, computed on the top-k tokens only (:func:`truncate`: top-k 40,
top-p 0.95, min-p 0.05, then the temperature, in that order, as llama.cpp
applies them), with a seeded generator, so a sample is reproducible. The
grammar checks the drawn token alone; only when it rejects that token is the
grammar applied to the whole row and the draw made again among the tokens it
allows. That is what llama.cpp's own samplers do (grammar after the draw,
the whole vocabulary only on a rejection); the distribution differs from
"grammar first" only by the share of a rejected draw's probability, which
the second draw spreads over the allowed tokens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


@dataclass(frozen=True)
class SamplingChain:
    """The truncation before the draw (llama-cpp-python's ``create_completion`` defaults)."""

    top_k: int = 40
    """Keep the k likeliest tokens (0: all)."""
    top_p: float = 0.95
    """Then the fewest likeliest tokens whose probabilities add up to at least this."""
    min_p: float = 0.05
    """Then those at least this share of the likeliest token's probability."""


class GrammarCheck(Protocol):
    """What sampling needs of a grammar (:class:`~acts_sql.llm.local.grammar.GrammarCheck`)."""

    def allows(self, token: int, logit: float) -> bool: ...

    def masked(self, logits: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]: ...

    def accept(self, token: int) -> None: ...


def truncate(
    logits: npt.NDArray[Any], temperature: float, chain: SamplingChain = SamplingChain()
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """The tokens a draw may pick from one row of logits, and their probabilities.

    Tokens whose logit is -inf (refused by a grammar) are never kept. Raises
    ValueError when no token is left or the temperature is not positive.
    """
    import numpy as np

    if temperature <= 0:
        raise ValueError(f"sampling needs a temperature above 0, got {temperature}")
    row = np.asarray(logits)
    count = row.shape[0]
    k = count if chain.top_k <= 0 else min(chain.top_k, count)
    ids = np.argpartition(-row, k - 1)[:k] if k < count else np.arange(count)
    ids = ids[np.argsort(-row[ids], kind="stable")]
    values = row[ids].astype(np.float64)
    finite = np.isfinite(values)
    ids, values = ids[finite], values[finite]
    if ids.size == 0:
        raise ValueError("no token is left to sample from")
    probs = _softmax(values)
    if chain.top_p < 1.0:
        keep = int(np.searchsorted(np.cumsum(probs), chain.top_p)) + 1
        ids, values = ids[:keep], values[:keep]
    if chain.min_p > 0.0:
        kept = values >= values[0] + math.log(chain.min_p)
        ids, values = ids[kept], values[kept]
    return ids, _softmax(values / temperature)


def _softmax(values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    import numpy as np

    shifted = np.exp(values - values.max())
    return shifted / shifted.sum()  # type: ignore[no-any-return]


class SampleChooser:
    """Draws one token per row of logits (see the module doc); advances the grammar."""

    def __init__(
        self,
        temperature: float,
        seed: int,
        grammar: GrammarCheck | None = None,
        chain: SamplingChain = SamplingChain(),
    ) -> None:
        import numpy as np

        if temperature <= 0:
            raise ValueError(f"sampling needs a temperature above 0, got {temperature}")
        self.temperature = temperature
        self.grammar = grammar
        self.chain = chain
        self._random = np.random.default_rng(seed)
        self.rejected = 0
        """Draws the grammar refused (each cost one pass over the whole vocabulary)."""

    def choose(self, logits: npt.NDArray[np.float32], best: int | None = None) -> int:
        """A token drawn from `logits` (`best`, the greedy token, is not needed here)."""
        token = self.draw(logits)
        grammar = self.grammar
        if grammar is not None:
            if not grammar.allows(token, float(logits[token])):
                self.rejected += 1
                token = self.draw(grammar.masked(logits))
            grammar.accept(token)
        return token

    def accept(self, token: int) -> None:
        """Advance the grammar past a token written without drawing it (a forced one)."""
        if self.grammar is not None:
            self.grammar.accept(token)

    def allows(self, token: int, logit: float) -> bool:
        return self.grammar is None or self.grammar.allows(token, logit)

    def draw(self, logits: npt.NDArray[Any]) -> int:
        """A token drawn from the chain's truncation of `logits` (no grammar check)."""
        ids, probs = truncate(logits, self.temperature, self.chain)
        return self.draw_among(ids, probs)

    def draw_among(self, ids: npt.NDArray[Any], probs: npt.NDArray[np.float64]) -> int:
        """One of `ids`, drawn with the probabilities `probs` (adding up to 1)."""
        import numpy as np

        index = int(np.searchsorted(np.cumsum(probs), self._random.random(), side="right"))
        return int(ids[min(index, ids.size - 1)])
