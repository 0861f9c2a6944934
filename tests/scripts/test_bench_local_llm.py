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
        self.events: list[str] = []
        self.last_call: Any = None

    def reset_prompt_cache(self) -> None:
        self.events.append("reset")

    def complete(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        self.events.append("complete")
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


def test_every_mode_starts_from_an_empty_cache() -> None:
    script = load_script("bench_local_llm")
    off, on = Answering("SELECT a FROM t"), Answering("SELECT a FROM t")
    row = script.lookup_one(off, on, request(), lean=True)
    # each answer (off; on, then lean) comes right after its cache was emptied
    assert off.events == ["reset", "complete"]
    assert on.events == ["reset", "complete", "reset", "complete"]
    assert [r.max_tokens for r in off.requests + on.requests] == [64, 64, 64]
    assert row["identical"] and row["parted_at_char"] is None and row["identical_lean"]
    assert row["completion_tokens"] == row["completion_tokens_off"] == 4


def test_differing_replies_say_where_they_part() -> None:
    script = load_script("bench_local_llm")
    row = script.lookup_one(Answering("SELECT a FROM t"), Answering("SELECT b FROM t"), request())
    assert not row["identical"] and row["parted_at_char"] == 7
    assert script._parted_at("SELECT a", "SELECT a LIMIT 1") == 8  # one is a prefix of the other
    assert script._parted_at("same", "same") is None


def test_the_lean_mode_refuses_every_draft_and_then_restores_the_gate() -> None:
    script = load_script("bench_local_llm")
    from acts_sql.llm.local.call import LoadedModel

    original = LoadedModel.draft_gate
    with script.no_drafts():
        gate = LoadedModel.draft_gate(None, 2)  # type: ignore[arg-type]
        assert gate.length(True, 6) == 0 and gate.length(False, 16) == 0
    assert LoadedModel.draft_gate is original


def test_the_lean_summary_says_what_the_drafts_add_per_token() -> None:
    script = load_script("bench_local_llm")
    rows = [
        {"seconds_lean": 6.0, "completion_tokens_lean": 100, "identical_lean": True},
        {"seconds_lean": 4.0, "completion_tokens_lean": 100, "identical_lean": False},
    ]
    summary = script._lean_summary(rows, on_per_token=0.025)  # on: 40 tokens/s
    assert summary["seconds_lean"] == 10.0 and summary["completion_tokens_lean"] == 200
    assert summary["ratio_drafts"] == 2.0  # lean writes 20 tokens/s
    assert summary["identical_lean_prompts"] == 1
    assert script._lean_summary([{"seconds_lean": 1.0}, {}], 0.1) == {}  # not measured for all


def test_lean_adds_a_third_answer_from_the_lookup_backend() -> None:
    script = load_script("bench_local_llm")
    off, on = Answering("SELECT a FROM t"), Answering("SELECT b FROM t")
    row = script.lookup_one(off, on, request(), lean=True)
    assert [r.max_tokens for r in on.requests] == [64, 64]  # on, then lean
    assert row["completion_tokens_lean"] == 4 and not row["identical_lean"]
    assert "completion_tokens_lean" not in script.lookup_one(off, on, request())


def test_offset_and_limit_choose_a_slice_of_the_prompts() -> None:
    script = load_script("bench_local_llm")
    prompts = [{"id": f"p{i}"} for i in range(12)]
    ids = [p["id"] for p in script.chosen_prompts(prompts, 6, 0)]
    assert ids == [f"p{i}" for i in range(6, 12)]  # the other 6 of a run that used --limit 6
    assert [p["id"] for p in script.chosen_prompts(prompts, 2, 3)] == ["p2", "p3", "p4"]
    assert script.chosen_prompts(prompts, 0, 0) == prompts
