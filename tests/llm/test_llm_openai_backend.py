"""OpenAIBackend against a stub OpenAI-compatible server on 127.0.0.1 (real sockets)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from llm_stub import ChatStub, StubReply, api_error, completion

from acts_sql.errors import LLMDeadlineError, LLMError, LLMSpecError, LLMUnavailableError
from acts_sql.llm.base import LLMBackend, LLMRequest, Message
from acts_sql.llm.openai_backend import OpenAIBackend

SCHEMA = {
    "title": "Judge Decision",
    "type": "object",
    "properties": {"verdict": {"type": "string"}},
    "required": ["verdict"],
}


def request(purpose: str = "plan", *, schema: dict[str, Any] | None = None) -> LLMRequest:
    return LLMRequest(
        purpose=purpose,
        messages=[
            Message(role="system", content="You fix SQL."),
            Message(role="user", content="Fix it. Reply with JSON."),
        ],
        json_schema=schema,
        temperature=0.0,
        max_tokens=256,
    )


@pytest.fixture
def backend(chat_stub: ChatStub) -> Iterator[OpenAIBackend]:
    with OpenAIBackend(
        "stub-model", base_url=chat_stub.url, api_key="sk-test", timeout=5, backoff_s=0.01
    ) as made:
        yield made


def test_normal_reply_with_usage(chat_stub: ChatStub, backend: OpenAIBackend) -> None:
    chat_stub.reply(
        completion("SELECT 1", prompt_tokens=120, completion_tokens=9, cached_tokens=64)
    )
    response = backend.complete(request("generate_sql"))

    assert isinstance(backend, LLMBackend)
    assert backend.name == "openai:stub-model"
    assert response.text == "SELECT 1"
    assert response.usage.purpose == "generate_sql"
    assert response.usage.prompt_tokens == 120
    assert response.usage.completion_tokens == 9
    assert response.usage.cached_prompt_tokens == 64
    assert 0 < response.usage.seconds < 5

    [sent] = chat_stub.requests
    assert sent["model"] == "stub-model"
    assert sent["messages"] == [
        {"role": "system", "content": "You fix SQL."},
        {"role": "user", "content": "Fix it. Reply with JSON."},
    ]
    assert sent["temperature"] == 0.0
    assert sent["max_tokens"] == 256
    assert "response_format" not in sent
    assert chat_stub.auth == ["Bearer sk-test"]


def test_usage_without_cache_details_and_deepseek_style(
    chat_stub: ChatStub, backend: OpenAIBackend
) -> None:
    chat_stub.reply(completion("a"))
    deepseek = completion("b")
    deepseek.body["usage"]["prompt_cache_hit_tokens"] = 5
    chat_stub.reply(deepseek)
    assert backend.complete(request()).usage.cached_prompt_tokens == 0
    assert backend.complete(request()).usage.cached_prompt_tokens == 5


def test_json_schema_is_requested_when_the_server_supports_it(
    chat_stub: ChatStub, backend: OpenAIBackend
) -> None:
    chat_stub.reply(completion('{"verdict": "accept"}'))
    assert backend.complete(request("judge", schema=SCHEMA)).text == '{"verdict": "accept"}'
    [sent] = chat_stub.requests
    assert sent["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "Judge_Decision", "schema": SCHEMA, "strict": False},
    }
    assert backend.json_mode == "json_schema"


def test_json_mode_falls_back_once_and_is_remembered(
    chat_stub: ChatStub, backend: OpenAIBackend
) -> None:
    def no_json_schema(body: dict[str, Any]) -> StubReply:
        if (body.get("response_format") or {}).get("type") == "json_schema":
            return api_error(400, "response_format type json_schema is not supported")
        return completion('{"verdict": "accept"}')

    chat_stub.handler = no_json_schema
    assert backend.complete(request("judge", schema=SCHEMA)).text == '{"verdict": "accept"}'
    assert chat_stub.formats == ["json_schema", "json_object"]
    assert backend.json_mode == "json_object"

    backend.complete(request("judge", schema=SCHEMA))
    assert chat_stub.formats == ["json_schema", "json_object", "json_object"]

    backend.complete(request("plan"))  # no schema: no response_format at all
    assert chat_stub.formats[-1] is None


def test_json_mode_falls_back_to_none(chat_stub: ChatStub, backend: OpenAIBackend) -> None:
    def no_response_format(body: dict[str, Any]) -> StubReply:
        if "response_format" in body:
            return api_error(400, "Unrecognized request argument: response_format")
        return completion("{}")

    chat_stub.handler = no_response_format
    backend.complete(request(schema=SCHEMA))
    backend.complete(request(schema=SCHEMA))
    assert chat_stub.formats == ["json_schema", "json_object", None, None]
    assert backend.json_mode == "none"


def test_a_400_unrelated_to_json_mode_is_not_remembered(
    chat_stub: ChatStub, backend: OpenAIBackend
) -> None:
    chat_stub.handler = lambda body: api_error(400, "maximum context length exceeded")
    with pytest.raises(LLMError) as caught:
        backend.complete(request(schema=SCHEMA))
    assert "HTTP 400: maximum context length exceeded" in str(caught.value)
    assert caught.value.details["status"] == 400
    assert backend.json_mode == "json_schema"


def test_retries_on_500_then_succeeds(chat_stub: ChatStub, backend: OpenAIBackend) -> None:
    chat_stub.reply(api_error(500, "overloaded"), api_error(503, "busy"), completion("ok"))
    assert backend.complete(request()).text == "ok"
    assert len(chat_stub.requests) == 3


def test_retries_on_429_honouring_retry_after(chat_stub: ChatStub, backend: OpenAIBackend) -> None:
    chat_stub.reply(api_error(429, "slow down", **{"retry-after-ms": "150"}), completion("ok"))
    started = time.monotonic()
    assert backend.complete(request()).text == "ok"
    assert time.monotonic() - started >= 0.15
    assert len(chat_stub.requests) == 2


def test_gives_up_after_max_retries_with_endpoint_and_status(
    chat_stub: ChatStub, backend: OpenAIBackend
) -> None:
    chat_stub.handler = lambda body: api_error(502, "bad gateway\nupstream died")
    with pytest.raises(LLMError) as caught:
        backend.complete(request("judge"))
    message = str(caught.value)
    assert chat_stub.url in message
    assert "stub-model" in message
    assert "HTTP 502: bad gateway upstream died" in message
    assert "after 3 attempts" in message
    assert "\n" not in message
    assert caught.value.details["status"] == 502
    assert caught.value.details["purpose"] == "judge"
    assert len(chat_stub.requests) == 3


def test_client_errors_are_not_retried(chat_stub: ChatStub, backend: OpenAIBackend) -> None:
    chat_stub.handler = lambda body: api_error(401, "invalid api key")
    with pytest.raises(LLMError, match=r"HTTP 401: invalid api key \(check the API key"):
        backend.complete(request())
    assert len(chat_stub.requests) == 1


def test_a_server_slower_than_the_timeout_fails_within_it(chat_stub: ChatStub) -> None:
    chat_stub.handler = lambda body: StubReply(delay_s=10, body=completion("late").body)
    with OpenAIBackend("stub-model", base_url=chat_stub.url, api_key="k", timeout=0.5) as slow:
        started = time.monotonic()
        with pytest.raises(LLMError, match=r"no reply within 0\.5 s"):
            slow.complete(request())
        elapsed = time.monotonic() - started
    assert elapsed < 2.0
    assert len(chat_stub.requests) == 1  # the time budget was spent: no retry


def test_retries_stop_when_the_time_budget_is_spent(chat_stub: ChatStub) -> None:
    chat_stub.handler = lambda body: api_error(500, "down")
    with OpenAIBackend(
        "m", base_url=chat_stub.url, api_key="k", timeout=0.3, max_retries=50, backoff_s=0.05
    ) as backend:
        started = time.monotonic()
        with pytest.raises(LLMError, match="HTTP 500"):
            backend.complete(request())
        assert time.monotonic() - started < 1.0


def timed(seconds: float) -> LLMRequest:
    return request().model_copy(update={"timeout_s": seconds})


def test_the_time_left_of_the_run_bounds_the_call(chat_stub: ChatStub) -> None:
    chat_stub.handler = lambda body: StubReply(delay_s=10, body=completion("late").body)
    with OpenAIBackend("stub-model", base_url=chat_stub.url, api_key="k", timeout=60) as slow:
        started = time.monotonic()
        with pytest.raises(LLMDeadlineError) as caught:
            slow.complete(timed(0.4))
        elapsed = time.monotonic() - started
    assert elapsed < 1.5  # not the backend's 60 s
    assert len(chat_stub.requests) == 1
    error = caught.value
    assert isinstance(error, LLMError) and error.purpose == "plan" and error.seconds == 0.4
    assert str(error).startswith("wall time:") and "within 0.40 s" in str(error)


def test_the_backend_timeout_still_holds_when_the_run_has_more_time(chat_stub: ChatStub) -> None:
    chat_stub.handler = lambda body: StubReply(delay_s=10, body=completion("late").body)
    with (
        OpenAIBackend("stub-model", base_url=chat_stub.url, api_key="k", timeout=0.3) as slow,
        pytest.raises(LLMError, match=r"no reply within 0\.3 s") as caught,
    ):
        slow.complete(timed(30.0))
    assert not isinstance(caught.value, LLMDeadlineError)  # the endpoint's failure


def test_no_retry_goes_past_the_deadline(chat_stub: ChatStub) -> None:
    chat_stub.handler = lambda body: api_error(500, "down")
    with OpenAIBackend(
        "m", base_url=chat_stub.url, api_key="k", timeout=60, max_retries=50, backoff_s=0.05
    ) as backend:
        started = time.monotonic()
        with pytest.raises(LLMError, match="HTTP 500"):
            backend.complete(timed(0.3))
        assert time.monotonic() - started < 0.6
    assert 1 < len(chat_stub.requests) < 10


def test_a_call_with_no_time_left_is_not_sent(chat_stub: ChatStub, backend: OpenAIBackend) -> None:
    with pytest.raises(LLMDeadlineError):
        backend.complete(timed(0.0))
    assert chat_stub.requests == []


def test_the_finish_reason_is_reported(chat_stub: ChatStub, backend: OpenAIBackend) -> None:
    chat_stub.reply(completion("SELECT 1"))
    assert backend.complete(timed(5.0)).usage.stopped_by == "stop"


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (StubReply(body="<html>gateway</html>"), "body is not JSON"),
        (StubReply(body=[1, 2]), "body is not a JSON object"),
        (StubReply(body={"id": "x", "object": "chat.completion"}), "no choices[0].message"),
        (StubReply(body={"choices": [{"message": {"role": "assistant"}}]}), "no text content"),
        (StubReply(body={"error": {"message": "model crashed"}}), "model crashed"),
    ],
    ids=["html", "array", "no-choices", "no-content", "error-object"],
)
def test_malformed_body_raises_llm_error(
    chat_stub: ChatStub, backend: OpenAIBackend, reply: StubReply, reason: str
) -> None:
    chat_stub.reply(reply)
    with pytest.raises(LLMError) as caught:
        backend.complete(request())
    assert reason in str(caught.value)
    assert chat_stub.url in str(caught.value)


def test_endpoint_down_fails_quickly(closed_port_url: str) -> None:
    with OpenAIBackend("m", base_url=closed_port_url, api_key="k", backoff_s=0.01) as down:
        started = time.monotonic()
        with pytest.raises(LLMError) as caught:
            down.complete(request())
        assert time.monotonic() - started < 2.0
    message = str(caught.value)
    assert "cannot connect" in message
    assert closed_port_url in message
    assert "after 3 attempts" in message
    assert caught.value.details["status"] is None
    assert isinstance(caught.value, LLMUnavailableError)  # unreachable: not a bad answer


@pytest.mark.parametrize(
    ("status", "unusable"),
    [(401, True), (403, True), (404, True), (400, False), (422, False), (500, False)],
)
def test_only_statuses_every_request_would_get_make_the_endpoint_unavailable(
    chat_stub: ChatStub, backend: OpenAIBackend, status: int, unusable: bool
) -> None:
    chat_stub.handler = lambda body: api_error(status, "no")
    with pytest.raises(LLMError) as caught:
        backend.complete(request())
    assert isinstance(caught.value, LLMUnavailableError) is unusable
    assert caught.value.details["status"] == status


def test_a_malformed_reply_is_a_bad_answer_not_an_unavailable_endpoint(
    chat_stub: ChatStub, backend: OpenAIBackend
) -> None:
    chat_stub.reply(StubReply(body="not json"))
    with pytest.raises(LLMError) as caught:
        backend.complete(request())
    assert not isinstance(caught.value, LLMUnavailableError)


def test_reasoning_block_is_removed(chat_stub: ChatStub, backend: OpenAIBackend) -> None:
    chat_stub.reply(completion('<think>\nthe filter {is} wrong\n</think>\n{"sql": "SELECT 1"}'))
    assert backend.complete(request()).text == '{"sql": "SELECT 1"}'


def test_endpoint_and_key_default_from_the_environment(
    chat_stub: ChatStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", chat_stub.url)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with OpenAIBackend("env-model") as from_env:
        assert from_env.endpoint == chat_stub.url
        from_env.complete(request())
    assert chat_stub.requests[0]["model"] == "env-model"
    assert chat_stub.auth[0] == "Bearer sk-no-key-required"  # a local server needs none


def test_the_official_api_without_a_key_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(LLMSpecError, match="OPENAI_API_KEY"):
        OpenAIBackend("gpt-4o-mini")


@pytest.mark.parametrize(
    "kwargs", [{"timeout": 0}, {"max_retries": -1}, {"backoff_s": -1.0}], ids=str
)
def test_bad_settings_are_configuration_errors(kwargs: dict[str, Any]) -> None:
    with pytest.raises(LLMSpecError):
        OpenAIBackend("m", base_url="http://127.0.0.1:9/v1", api_key="k", **kwargs)
