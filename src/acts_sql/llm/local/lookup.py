"""Prompt lookup (n-gram speculative decoding), on token lists: drafter, acceptance, length.

A reply that copies the user's SQL back with a few edits is predictable from
its own context: when the reply's last n tokens occurred before (in the
prompt, or earlier in the reply), the tokens that followed them there are a
good guess of what comes next. The decoder evaluates that draft in one batch
(logits for every position) and keeps the longest prefix that greedy decoding
would have written (:func:`accept_prefix`), so the output is the greedy one
for the logits computed; only the number of model evaluations changes. Those
logits are the single-step ones when the batch has at most
:data:`MAX_VERIFY_BATCH` tokens and llama.cpp keeps llamafile's kernels
away from such batches; otherwise a near-tie may fall the other way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

NGRAM_SIZES = (3, 2)
"""The n-gram lengths tried, longest first."""

MAX_VERIFY_BATCH = 7
"""The most tokens evaluated in one verification (the last written token and its draft).

llama.cpp computes a position's logits bit-identically in a batch of up to 7
tokens and alone, when llamafile's matrix kernels do not take such batches
(the patched build `scripts/demo.sh` installs gives them only 8 rows or more,
`scripts/patch_llama_source.py`) and it runs without flash attention: both
then take the same per-row dot products. From 8 tokens
on, another kernel path gives different last bits (up to 0.47 in the logits of
the 0.5B model at an 887-token context; ``scripts/batch_numerics.py``), and a
near-tie could fall the other way. Capped here, prompt lookup writes exactly
the tokens of plain greedy decoding.
"""

MAX_DRAFT = MAX_VERIFY_BATCH - 1
"""The most drafted tokens per verification."""


class NgramDrafter:
    """Drafts continuations by looking the context's last n-gram up earlier in it.

    The context is the prompt, then every token written so far
    (:meth:`append`). An index maps each n-gram to the position that followed
    its latest occurrence, so a look-up costs one dictionary access per size.
    Once a draft's source is found, the drafter follows it (a cursor) for as
    long as the written tokens agree with it: a reply copying a SQL statement
    goes on copying the same occurrence, not whichever one repeats its last
    few tokens (``COUNT(o.id)`` in the SELECT list, not in the HAVING clause).
    """

    def __init__(self, context: Sequence[int], sizes: Sequence[int] = NGRAM_SIZES) -> None:
        self.tokens: list[int] = list(context)
        self.sizes = tuple(sorted(set(sizes), reverse=True))
        if not self.sizes or self.sizes[-1] < 1:
            raise ValueError(f"n-gram sizes must be positive, got {sizes!r}")
        self._follows: dict[tuple[int, ...], int] = {}
        self._cursor: int | None = None
        """Where the context is being copied from: the position expected next."""
        self.fresh = True
        """The last draft came from a look-up (True), not from following a source."""
        for end in range(1, len(self.tokens)):
            self._index(end)

    def _index(self, end: int) -> None:
        """Record the n-grams that end just before position `end` (a token follows them)."""
        for size in self.sizes:
            if end >= size:
                self._follows[tuple(self.tokens[end - size : end])] = end

    def append(self, token: int) -> None:
        cursor = self._cursor
        if cursor is not None:
            self._cursor = cursor + 1 if self.tokens[cursor] == token else None
        self.tokens.append(token)
        self._index(len(self.tokens) - 1)

    def draft(self, limit: int) -> list[int]:
        """Up to `limit` tokens that follow the copied source, else the longest
        matching n-gram (empty: no match)."""
        if limit < 1:
            return []
        self.fresh = self._cursor is None
        if self._cursor is None:
            self._cursor = self._look_up()
            if self._cursor is None:
                return []
        return self.tokens[self._cursor : self._cursor + limit]

    def _look_up(self) -> int | None:
        length = len(self.tokens)
        for size in self.sizes:
            if length < size:
                continue
            follows = self._follows.get(tuple(self.tokens[length - size :]))
            if follows is not None:
                return follows
        return None


def accept_prefix(draft: Sequence[int], choose: Callable[[int], int]) -> tuple[int, int]:
    """``(accepted, next_token)``: how many draft tokens greedy decoding confirms.

    ``choose(i)`` is the token greedy decoding writes after the first `i`
    draft tokens (the argmax of the logits at that position, grammar
    applied); it is called in order, at most once per position, and never
    past the first mismatch (a grammar advances with each chosen token).
    ``next_token`` is the greedy token after the accepted ones: the first
    mismatch, or the token after a fully accepted draft.
    """
    for index, drafted in enumerate(draft):
        chosen = choose(index)
        if chosen != drafted:
            return index, chosen
    return len(draft), choose(len(draft))


class DraftLength:
    """How many tokens to draft next: grows while drafts are accepted, shrinks after misses.

    A fully accepted draft doubles the length (up to `most`, by default
    :data:`MAX_DRAFT`, so that the output stays the greedy one); a miss sets it
    to one more than what was accepted (at least `least`), so a reply that
    stops copying costs little: a rejected draft token is one more position
    in a batch, about a third of a single-token step.
    """

    def __init__(self, start: int = MAX_DRAFT, *, least: int = 1, most: int = MAX_DRAFT) -> None:
        if not 1 <= least <= start <= most:
            raise ValueError(f"need 1 <= least <= start <= most, got {least}, {start}, {most}")
        self.value = start
        self.least = least
        self.most = most

    def update(self, drafted: int, accepted: int) -> None:
        if drafted == 0:
            return
        if accepted >= drafted:
            self.value = min(self.most, max(self.value, drafted) * 2)
        else:
            self.value = max(self.least, accepted + 1)


class DraftGate:
    """How much of a draft to evaluate, by the step times and acceptance measured so far.

    An evaluation of n tokens costs ``cost(n)`` seconds (measured per batch
    size; a size not seen yet is guessed from the single-token step as
    ``single * (1 + 0.45 * (n - 1))``, what 2 idle cores measured). If each
    drafted token is confirmed with probability p, a draft of k tokens writes
    ``1 + p + ... + p**k`` tokens on average; the gate picks the k (0: no
    draft) with the most tokens per second. p is the confirmed share of
    drafted tokens, tracked apart for drafts that follow a source being
    copied (mostly confirmed) and for fresh look-ups (often not). On 2 idle
    cores drafting pays from a share of about 45%; on 1 busy core, where a
    batch costs nearly as much as its tokens one by one, rarely. A fresh
    look-up the gate refuses still sets the drafter's cursor: if the reply
    then follows it, the next draft is a following one. After `explore_after`
    refusals in a row a short draft goes through anyway, so that a share or a
    cost measured badly once can recover.
    """

    def __init__(
        self, *, weight: float = 0.3, explore_after: int = 8, guessed_extra: float = 0.45
    ) -> None:
        self.weight = weight
        self.explore_after = explore_after
        self.guessed_extra = guessed_extra
        self.cost: dict[int, float] = {}
        """Seconds of an evaluation by its number of tokens (a moving average)."""
        self.share = {True: 0.5, False: 1.0}
        """Confirmed share of drafted tokens, for fresh look-ups (True) and following drafts."""
        self._refused = {True: 0, False: 0}

    def _mix(self, old: float | None, new: float) -> float:
        return new if old is None else old + self.weight * (new - old)

    def new_reply(self) -> None:
        """Forget the confirmed shares (they are the reply's); keep the measured costs."""
        self.share = {True: 0.5, False: 1.0}
        self._refused = {True: 0, False: 0}

    def record_step(self, tokens: int, seconds: float) -> None:
        if tokens >= 1 and seconds > 0:
            self.cost[tokens] = self._mix(self.cost.get(tokens), seconds)

    def record_draft(self, fresh: bool, drafted: int, accepted: int) -> None:
        if drafted:
            self.share[fresh] = self._mix(self.share[fresh], accepted / drafted)

    def length(self, fresh: bool, most: int) -> int:
        """How many of `most` drafted tokens to evaluate (0: none)."""
        single = self.cost.get(1)
        if single is None or most < 1:
            return most
        share = min(self.share[fresh], 0.999)
        best, best_rate = 0, 1.0 / single
        expected = 1.0
        for k in range(1, most + 1):
            expected += share**k
            cost = self.cost.get(k + 1, single * (1 + self.guessed_extra * k))
            if expected / cost > best_rate:
                best, best_rate = k, expected / cost
        if best:
            self._refused[fresh] = 0
            return best
        self._refused[fresh] += 1
        if self._refused[fresh] > self.explore_after:
            self._refused[fresh] = 0
            return min(2, most)
        return 0
