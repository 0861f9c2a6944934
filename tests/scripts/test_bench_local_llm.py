"""scripts/bench_local_llm.py's prompt-lookup comparison, on stand-in backends (no model)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from acts_sql.llm.base import LLMRequest, LLMResponse, Message, Usage
from support import load_script


class Answering:
    """Answers every request with `text`; keeps the requests and the last call's stats."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.requests: list[LLMRequest] = []
        self.last_call: Any = None

    def complete(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        words = self.text.split()[: request.max_tokens]
        self.last_call = SimpleNamespace(
            prompt_tokens=50,
            completion_tokens=len(words),
            generation_seconds=0.5,
            drafted_tokens=4,
            accepted_tokens=3,
            decode_steps=2,
            threads=2,
        )
        return LLMResponse(text=" ".join(words), usage=Usage(purpose=request.purpose))


def request() -> LLMRequest:
    return LLMRequest(
        purpose="generate_sql", messages=[Message(role="user", content="fix it")], max_tokens=64
    )


def test_both_modes_start_from_a_prompt_evaluated_by_a_one_token_call() -> None:
    script = load_script("bench_local_llm")
    off, on = Answering("SELECT a FROM t"), Answering("SELECT a FROM t")
    row = script.lookup_one(off, on, request())
    # the warm-up is off's first request, one token long; then each mode answers in full
    assert [r.max_tokens for r in off.requests] == [1, 64]
    assert [r.max_tokens for r in on.requests] == [64]
    assert off.requests[0].messages == on.requests[0].messages
    assert row["identical"] and row["parted_at_char"] is None
    assert row["completion_tokens"] == row["completion_tokens_off"] == 4


def test_differing_replies_say_where_they_part() -> None:
    script = load_script("bench_local_llm")
    row = script.lookup_one(Answering("SELECT a FROM t"), Answering("SELECT b FROM t"), request())
    assert not row["identical"] and row["parted_at_char"] == 7
    assert script._parted_at("SELECT a", "SELECT a LIMIT 1") == 8  # one is a prefix of the other
    assert script._parted_at("same", "same") is None
