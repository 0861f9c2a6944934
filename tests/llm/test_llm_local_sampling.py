"""Sampling for the project's decoder: llama.cpp's truncation order, seeds, the grammar check."""

from __future__ import annotations

import math
from typing import Any

import pytest

np = pytest.importorskip("numpy", reason="sampling reads logit rows as numpy arrays")

from acts_sql.llm.local.sampling import SampleChooser, SamplingChain, truncate  # noqa: E402

PROBS = [0.5, 0.3, 0.15, 0.04, 0.01]


def row(probs: list[float], pad: int = 0) -> Any:
    """Logits whose softmax is `probs` (then `pad` refused tokens)."""
    return np.array([math.log(p) for p in probs] + [-math.inf] * pad, dtype=np.float32)


def test_top_p_then_min_p_then_the_temperature_in_llama_cpps_order() -> None:
    chain = SamplingChain(top_k=0, top_p=0.9, min_p=0.5)
    ids, probs = truncate(row(PROBS), 0.5, chain)
    # top-p 0.9 keeps 0.5, 0.3, 0.15 (0.8 < 0.9 <= 0.95); min-p 0.5 keeps p >= 0.25;
    # the temperature 0.5 squares what is left: 0.25 : 0.09
    assert ids.tolist() == [0, 1]
    assert probs.tolist() == pytest.approx([0.25 / 0.34, 0.09 / 0.34], rel=1e-5)


def test_top_k_keeps_the_k_likeliest_in_order() -> None:
    logits = row([0.1, 0.4, 0.2, 0.3])
    ids, probs = truncate(logits, 1.0, SamplingChain(top_k=2, top_p=1.0, min_p=0.0))
    assert ids.tolist() == [1, 3]
    assert probs.tolist() == pytest.approx([4 / 7, 3 / 7], rel=1e-5)


def test_a_temperature_above_one_flattens_what_the_truncation_kept() -> None:
    chain = SamplingChain(top_k=0, top_p=1.0, min_p=0.0)
    _, cool = truncate(row(PROBS), 0.5, chain)
    _, hot = truncate(row(PROBS), 2.0, chain)
    assert cool[0] > 0.5 > hot[0]
    assert hot[-1] > 0.01 > cool[-1]


def test_a_confident_row_leaves_only_the_greedy_token_whatever_the_temperature() -> None:
    """Why the samples of a sure model repeat its greedy answer: top-p 0.95 cuts first."""
    for temperature in (0.8, 1.0, 1.5):
        ids, probs = truncate(row([0.97, 0.02, 0.01]), temperature)
        assert ids.tolist() == [0] and probs.tolist() == [1.0]


def test_refused_tokens_are_never_kept_and_nothing_left_is_an_error() -> None:
    ids, _ = truncate(row([0.6, 0.4], pad=3), 1.0, SamplingChain(top_p=1.0, min_p=0.0))
    assert ids.tolist() == [0, 1]
    with pytest.raises(ValueError, match="no token"):
        truncate(row([], pad=4), 1.0)
    with pytest.raises(ValueError, match="temperature"):
        truncate(row(PROBS), 0.0)
    with pytest.raises(ValueError, match="temperature"):
        SampleChooser(0.0, seed=1)


def test_draws_follow_the_truncated_distribution_and_a_seed_repeats_them() -> None:
    chain = SamplingChain(top_k=0, top_p=1.0, min_p=0.0)
    logits = row(PROBS)
    chooser = SampleChooser(1.0, seed=3, chain=chain)
    draws = [chooser.choose(logits) for _ in range(5000)]
    shares = np.bincount(draws, minlength=5) / len(draws)
    assert shares.tolist() == pytest.approx(PROBS, abs=0.02)
    again = SampleChooser(1.0, seed=3, chain=chain)
    assert [again.choose(logits) for _ in range(50)] == draws[:50]
    other = SampleChooser(1.0, seed=4, chain=chain)
    assert [other.choose(logits) for _ in range(50)] != draws[:50]


class RefusingGrammar:
    """Refuses the tokens in `refused`; records what it was asked."""

    def __init__(self, refused: set[int]) -> None:
        self.refused = refused
        self.asked: list[int] = []
        self.masks = 0
        self.accepted: list[int] = []

    def allows(self, token: int, logit: float) -> bool:
        self.asked.append(token)
        return token not in self.refused

    def masked(self, logits: Any) -> Any:
        self.masks += 1
        out = np.array(logits, dtype=np.float32)
        out[list(self.refused)] = -math.inf
        return out

    def accept(self, token: int) -> None:
        self.accepted.append(token)


def test_the_grammar_is_asked_about_the_drawn_token_and_masks_only_on_a_refusal() -> None:
    grammar = RefusingGrammar({0})
    chooser = SampleChooser(1.0, seed=5, grammar=grammar, chain=SamplingChain(0, 1.0, 0.0))
    drawn = [chooser.choose(row(PROBS)) for _ in range(400)]
    assert 0 not in drawn
    assert grammar.accepted == drawn  # every chosen token advanced the grammar, in order
    assert len(grammar.asked) == 400  # one question per token
    assert grammar.masks == chooser.rejected
    assert 150 < grammar.masks < 250  # token 0 is drawn about half of the time


def test_a_grammar_that_allows_the_draw_costs_no_mask() -> None:
    grammar = RefusingGrammar({4})
    chooser = SampleChooser(0.8, seed=1, grammar=grammar)  # min-p drops token 4 anyway
    for _ in range(100):
        chooser.choose(row(PROBS))
    assert grammar.masks == 0 and chooser.rejected == 0
