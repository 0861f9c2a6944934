"""ask_json: extract, repair, validate, re-ask; never raise on bad LLM output."""

from __future__ import annotations

from typing import Literal

import pytest
from llm_stub import RecordingBackend
from pydantic import BaseModel

from acts_sql.errors import LLMError, ScriptExhaustedError
from acts_sql.llm.base import LLMRequest, Message
from acts_sql.llm.scripted import ScriptedBackend
from acts_sql.llm.structured import StructuredReply, ask_json


class Judgement(BaseModel):
    verdict: Literal["accept", "reject"]
    reason: str
    backtrack_to: str | None = None


def judge_request() -> LLMRequest:
    return LLMRequest(
        purpose="judge",
        messages=[
            Message(role="system", content="You judge SQL."),
            Message(role="user", content="Is this right? Reply with JSON."),
        ],
    )


def scripted(*responses: str) -> RecordingBackend:
    return RecordingBackend(ScriptedBackend({"judge": list(responses)}))


def test_success_on_the_first_try() -> None:
    backend = scripted('{"verdict": "accept", "reason": "matches the question"}')
    reply = ask_json(backend, judge_request(), Judgement)
    assert reply.ok
    assert reply.value == Judgement(verdict="accept", reason="matches the question")
    assert reply.error is None
    assert reply.attempts == 1
    assert [response.text for response in reply.responses] == [
        '{"verdict": "accept", "reason": "matches the question"}'
    ]
    assert len(backend.requests) == 1


def test_json_schema_defaults_to_the_model_schema() -> None:
    backend = scripted('{"verdict": "accept", "reason": "r"}')
    ask_json(backend, judge_request(), Judgement)
    assert backend.requests[0].json_schema == Judgement.model_json_schema()


def test_a_schema_given_by_the_caller_is_kept() -> None:
    backend = scripted('{"verdict": "accept", "reason": "r"}')
    request = judge_request().model_copy(update={"json_schema": {"type": "object"}})
    ask_json(backend, request, Judgement)
    assert backend.requests[0].json_schema == {"type": "object"}


def test_repaired_output_is_accepted_without_re_asking() -> None:
    backend = scripted(
        "Here you go:\n```json\n{'verdict': 'reject', 'reason': 'empty result', "
        "'backtrack_to': None,}\n```"
    )
    reply = ask_json(backend, judge_request(), Judgement)
    assert reply.value == Judgement(verdict="reject", reason="empty result", backtrack_to=None)
    assert reply.attempts == 1
    assert len(reply.responses) == 1  # no re-ask (the repairs are tested in test_llm_jsonrepair)


def test_re_asks_after_invalid_output_stating_the_validation_error() -> None:
    bad = '{"verdict": "maybe", "reason": "not sure"}'
    backend = scripted(bad, '{"verdict": "reject", "reason": "wrong filter"}')
    reply = ask_json(backend, judge_request(), Judgement)

    assert reply.ok
    assert reply.value is not None and reply.value.verdict == "reject"
    assert reply.attempts == 2
    second = backend.requests[1].messages
    assert second[: len(judge_request().messages)] == judge_request().messages
    assert second[-2] == Message(role="assistant", content=bad)
    assert second[-1].role == "user"
    feedback = second[-1].content
    assert "verdict" in feedback
    assert "'accept' or 'reject'" in feedback
    assert "'maybe'" in feedback
    assert "only the corrected JSON object" in feedback


def test_missing_fields_are_named_in_the_feedback() -> None:
    backend = scripted('{"verdict": "accept"}', '{"verdict": "accept", "reason": "ok"}')
    reply = ask_json(backend, judge_request(), Judgement)
    assert reply.ok
    assert "reason: required field is missing" in backend.requests[1].messages[-1].content


def test_non_json_output_is_fed_back_as_such() -> None:
    backend = scripted("I think the query is fine.", '{"verdict": "accept", "reason": "ok"}')
    reply = ask_json(backend, judge_request(), Judgement)
    assert reply.ok and reply.attempts == 2
    assert "no JSON object found" in backend.requests[1].messages[-1].content


def test_validate_callback_rejection_is_fed_back_and_re_asked() -> None:
    nodes = {"n1", "n2"}

    def known_node(value: Judgement) -> str | None:
        if value.backtrack_to is not None and value.backtrack_to not in nodes:
            return f"backtrack_to names {value.backtrack_to!r}, which is not a node of the plan"
        return None

    backend = scripted(
        '{"verdict": "reject", "reason": "r", "backtrack_to": "n9"}',
        '{"verdict": "reject", "reason": "r", "backtrack_to": "n1"}',
    )
    reply = ask_json(backend, judge_request(), Judgement, validate=known_node)
    assert reply.value is not None and reply.value.backtrack_to == "n1"
    assert reply.attempts == 2
    assert (
        "backtrack_to names 'n9', which is not a node" in backend.requests[1].messages[-1].content
    )


def test_exhaustion_returns_an_error_not_an_exception() -> None:
    backend = scripted("nope", '{"verdict": 1}', '{"verdict": "maybe", "reason": "x"}')
    reply: StructuredReply[Judgement] = ask_json(backend, judge_request(), Judgement, retries=2)
    assert not reply.ok
    assert reply.value is None
    assert reply.attempts == 3
    assert len(reply.responses) == 3
    assert reply.error is not None
    assert "after 3 attempts" in reply.error
    assert "'accept' or 'reject'" in reply.error  # the last problem
    # the conversation grew by one (bad reply, feedback) pair per re-ask
    assert len(backend.requests[2].messages) == len(judge_request().messages) + 4


def test_retries_zero_means_a_single_call() -> None:
    backend = scripted("nope", '{"verdict": "accept", "reason": "never asked"}')
    reply = ask_json(backend, judge_request(), Judgement, retries=0)
    assert not reply.ok
    assert reply.attempts == 1
    assert len(backend.requests) == 1


def test_backend_errors_propagate() -> None:
    backend = scripted("not json")  # the re-ask finds the script exhausted
    with pytest.raises(ScriptExhaustedError):
        ask_json(backend, judge_request(), Judgement)


def test_usage_lists_every_call() -> None:
    backend = scripted("x", '{"verdict": "accept", "reason": "ok"}')
    reply = ask_json(backend, judge_request(), Judgement)
    assert [usage.purpose for usage in reply.usage] == ["judge", "judge"]


def test_llm_error_is_not_swallowed() -> None:
    class Down:
        name = "down"

        def complete(self, request: LLMRequest) -> object:
            raise LLMError("endpoint down")

    with pytest.raises(LLMError, match="endpoint down"):
        ask_json(Down(), judge_request(), Judgement)  # type: ignore[arg-type]
