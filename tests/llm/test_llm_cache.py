"""CachedBackend: hits, misses, what the key covers, corrupt entries, failures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acts_sql.errors import LLMError, LLMSpecError
from acts_sql.llm.base import LLMBackend, LLMRequest, LLMResponse, Message, Usage
from acts_sql.llm.cache import CachedBackend, ReplayedUsage, request_key


class CountingBackend:
    """Answers with a numbered reply and counts the calls that reached it."""

    def __init__(self, name: str = "fake:model") -> None:
        self.name = name
        self.calls = 0

    def complete(self, request: LLMRequest) -> LLMResponse:
        self.calls += 1
        usage = Usage(
            purpose=request.purpose,
            prompt_tokens=100 + self.calls,
            cached_prompt_tokens=40,
            completion_tokens=7,
            seconds=1.5,
        )
        return LLMResponse(text=f"reply {self.calls} to {request.purpose}", usage=usage)


class FailingBackend:
    name = "fake:down"

    def complete(self, request: LLMRequest) -> LLMResponse:
        raise LLMError("endpoint down")


def request(purpose: str = "plan", content: str = "fix this", **changes: object) -> LLMRequest:
    base = LLMRequest(
        purpose=purpose,
        messages=[
            Message(role="system", content="You are the Central Agent."),
            Message(role="user", content=content),
        ],
        json_schema={"type": "object", "properties": {"sql": {"type": "string"}}},
    )
    return base.model_copy(update=changes)


def test_an_identical_request_is_answered_from_disk(tmp_path: Path) -> None:
    inner = CountingBackend()
    cached = CachedBackend(inner, tmp_path)
    assert isinstance(cached, LLMBackend) and cached.name == inner.name
    first = cached.complete(request())
    second = cached.complete(request())
    assert inner.calls == 1
    assert second.text == first.text == "reply 1 to plan"
    assert isinstance(second.usage, ReplayedUsage) and second.usage.replayed
    assert not isinstance(first.usage, ReplayedUsage)
    assert (second.usage.prompt_tokens, second.usage.cached_prompt_tokens) == (101, 40)
    assert second.usage.completion_tokens == 7 and second.usage.seconds == 0.0
    assert cached.stats.as_dict() == {"hits": 1, "misses": 1, "repaired": 0, "unwritten": 0}


def test_a_new_backend_object_reads_what_an_earlier_one_recorded(tmp_path: Path) -> None:
    CachedBackend(CountingBackend(), tmp_path).complete(request())
    inner = CountingBackend()
    assert CachedBackend(inner, tmp_path).complete(request()).text == "reply 1 to plan"
    assert inner.calls == 0


@pytest.mark.parametrize(
    "changed",
    [
        request(purpose="judge"),
        request(content="fix that"),
        request(json_schema=None),
        request(temperature=0.7),
        request(max_tokens=64),
        request(messages=[Message(role="user", content="fix this")]),
    ],
    ids=["purpose", "message", "schema", "temperature", "max_tokens", "roles"],
)
def test_any_difference_in_the_request_is_a_miss(tmp_path: Path, changed: LLMRequest) -> None:
    inner = CountingBackend()
    cached = CachedBackend(inner, tmp_path)
    cached.complete(request())
    assert cached.complete(changed).text.startswith("reply 2")
    assert inner.calls == 2


def test_another_model_is_a_miss(tmp_path: Path) -> None:
    CachedBackend(CountingBackend("fake:small"), tmp_path).complete(request())
    other = CountingBackend("fake:large")
    CachedBackend(other, tmp_path).complete(request())
    assert other.calls == 1
    assert request_key("fake:small", request()) != request_key("fake:large", request())


def test_the_key_ignores_the_time_left_so_a_replay_always_hits(tmp_path: Path) -> None:
    assert request_key("m", request(timeout_s=12.5)) == request_key("m", request())
    inner = CountingBackend()
    cached = CachedBackend(inner, tmp_path)
    cached.complete(request(timeout_s=600.0))
    assert cached.complete(request(timeout_s=0.4)).text == "reply 1 to plan"
    assert cached.complete(request()).text == "reply 1 to plan"
    assert inner.calls == 1
    assert "timeout_s" not in json.loads(cached.entry_path(request()).read_text())["request"]


class StoppedBackend(CountingBackend):
    """Says why each reply ended."""

    def __init__(self, stopped_by: str) -> None:
        super().__init__()
        self.stopped_by = stopped_by

    def complete(self, request: LLMRequest) -> LLMResponse:
        response = super().complete(request)
        response.usage.stopped_by = self.stopped_by
        return response


def test_a_reply_cut_short_by_its_deadline_is_not_recorded(tmp_path: Path) -> None:
    inner = StoppedBackend("deadline")
    cached = CachedBackend(inner, tmp_path)
    assert cached.complete(request(timeout_s=0.5)).usage.stopped_by == "deadline"
    assert cached.complete(request(timeout_s=60.0)).text == "reply 2 to plan"  # asked again
    assert not any(tmp_path.rglob("*.json"))
    assert cached.stats.as_dict() == {"hits": 0, "misses": 2, "repaired": 0, "unwritten": 0}


def test_why_a_reply_ended_is_replayed(tmp_path: Path) -> None:
    cached = CachedBackend(StoppedBackend("length"), tmp_path)
    cached.complete(request())
    replayed = cached.complete(request())
    assert replayed.usage.replayed and replayed.usage.stopped_by == "length"


def test_the_key_ignores_json_key_order() -> None:
    one = request(json_schema={"type": "object", "required": ["sql"]})
    two = request(json_schema={"required": ["sql"], "type": "object"})
    assert request_key("m", one) == request_key("m", two)


def test_the_key_covers_the_sql_to_avoid_a_local_model_is_steered_by() -> None:
    from acts_sql.llm.base import AvoidValues

    plain = request()
    assert request_key("m", plain) == request_key("m", request(avoid=AvoidValues(values=[])))
    steered = request(avoid=AvoidValues(values=["SELECT 1"]))
    assert request_key("m", steered) != request_key("m", plain)


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text[: len(text) // 2],  # truncated
        lambda text: "not json at all",
        lambda text: json.dumps({**json.loads(text), "format": 99}),
        lambda text: json.dumps({**json.loads(text), "response": {"text": 5}}),
        lambda text: text.replace("fix this", "fix THAT"),  # another request's entry
    ],
    ids=["truncated", "garbage", "format", "no-text", "foreign"],
)
def test_a_corrupted_entry_is_a_miss_and_is_rewritten(tmp_path: Path, damage) -> None:
    inner = CountingBackend()
    cached = CachedBackend(inner, tmp_path)
    cached.complete(request())
    entry = cached.entry_path(request())
    entry.write_text(damage(entry.read_text()))
    assert cached.complete(request()).text == "reply 2 to plan"
    assert cached.stats.repaired == 1
    assert json.loads(entry.read_text())["response"]["text"] == "reply 2 to plan"
    assert cached.complete(request()).text == "reply 2 to plan"  # and now it hits again
    assert inner.calls == 2


def test_entries_are_written_atomically_under_their_key(tmp_path: Path) -> None:
    cached = CachedBackend(CountingBackend(), tmp_path)
    cached.complete(request())
    key = request_key("fake:model", request())
    assert [p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()] == [
        f"{key[:2]}/{key}.json"
    ]


def test_a_failed_call_is_not_recorded(tmp_path: Path) -> None:
    cached = CachedBackend(FailingBackend(), tmp_path)
    with pytest.raises(LLMError, match="endpoint down"):
        cached.complete(request())
    assert not any(tmp_path.rglob("*.json"))


def test_an_unwritable_cache_still_returns_the_reply(tmp_path: Path) -> None:
    cached = CachedBackend(CountingBackend(), tmp_path)
    blocker = cached.entry_path(request()).parent
    blocker.write_text("a file where the entry's directory should be")
    assert cached.complete(request()).text == "reply 1 to plan"
    assert cached.stats.unwritten == 1


def test_a_cache_path_that_is_a_file_is_a_configuration_error(tmp_path: Path) -> None:
    path = tmp_path / "file"
    path.write_text("x")
    with pytest.raises(LLMSpecError, match="LLM cache directory"):
        CachedBackend(CountingBackend(), path)
