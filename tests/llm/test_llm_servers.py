"""OpenAIBackend against stub servers that behave like the real ones users run.

Each stub imitates one behaviour seen in the wild (docs/LLM_SERVERS.md): the refusal of
``response_format: json_schema`` with HTTP 500 (llama-cpp-python's server) or 400, a
server that ignores ``response_format`` and answers in prose or in a code block, one
that refuses ``seed``, one too slow for the call's time limit. Real sockets
(``llm_stub``, a ``http.server`` in a thread on 127.0.0.1).
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from llm_stub import ChatStub, StubReply, api_error, completion
from pydantic import BaseModel

from acts_sql.errors import LLMError, LLMSpecError
from acts_sql.llm.base import LLMRequest, Message
from acts_sql.llm.endpoint_limits import (
    DEFAULT_TIMEOUT_S,
    LOOPBACK_TIMEOUT_S,
    TIMEOUT_ENV,
    is_loopback,
)
from acts_sql.llm.openai_backend import OpenAIBackend
from acts_sql.llm.structured import ask_json

LLAMA_CPP_PYTHON_500 = StubReply(
    status=500,
    body={
        "error": {
            "message": (
                "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', "
                "'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", "
                "'input': 'json_schema', 'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n"
                '  File ".../llama_cpp/server/app.py", line 376, in create_chat_completion\n'
                "    POST /v1/chat/completions"
            ),
            "type": "internal_server_error",
            "param": None,
            "code": None,
        }
    },
)
"""What llama-cpp-python's server (0.3.36) answers to ``response_format: json_schema``."""


class Fix(BaseModel):
    sql: str


def ask(schema: bool = True, seed: int | None = None) -> LLMRequest:
    return LLMRequest(
        purpose="generate_sql",
        messages=[Message(role="user", content="Fix it. Reply with JSON: {sql}.")],
        json_schema=Fix.model_json_schema() if schema else None,
        seed=seed,
        max_tokens=64,
    )


def backend_for(stub: ChatStub, **kwargs: Any) -> OpenAIBackend:
    settings: dict[str, Any] = {"api_key": "none", "timeout": 5, "backoff_s": 0.01}
    return OpenAIBackend("q05", base_url=stub.url, **(settings | kwargs))


def refuse_json_schema(body: dict[str, Any]) -> StubReply:
    if (body.get("response_format") or {}).get("type") == "json_schema":
        return LLAMA_CPP_PYTHON_500
    return completion('{"sql": "SELECT 1"}')


# -- JSON-mode negotiation ------------------------------------------------------------


def test_a_500_naming_json_schema_falls_back_to_json_object_at_once(chat_stub: ChatStub) -> None:
    chat_stub.handler = refuse_json_schema
    with backend_for(chat_stub, max_retries=2) as backend:
        first = backend.complete(ask())
        second = backend.complete(ask())
    assert first.text == second.text == '{"sql": "SELECT 1"}'
    # the refusal is not retried (the same request gets the same 500), and not asked again
    assert chat_stub.formats == ["json_schema", "json_object", "json_object"]
    assert backend.json_mode == "json_object"


def test_a_refused_mode_is_not_tried_again_even_when_the_next_one_fails(
    chat_stub: ChatStub,
) -> None:
    chat_stub.reply(LLAMA_CPP_PYTHON_500, api_error(503, "the model is loading"))
    with backend_for(chat_stub, max_retries=0) as backend:
        with pytest.raises(LLMError) as caught:
            backend.complete(ask())
        chat_stub.handler = refuse_json_schema
        backend.complete(ask())
    message = str(caught.value)
    assert "HTTP 503: the model is loading" in message
    assert "before that: response_format json_schema: HTTP 500:" in message
    assert "Input should be 'text' or 'json_object'" in message
    assert chat_stub.formats == ["json_schema", "json_object", "json_object"]


def test_400s_naming_response_format_fall_back_to_no_format(chat_stub: ChatStub) -> None:
    def no_response_format(body: dict[str, Any]) -> StubReply:
        if "response_format" in body:
            return api_error(400, "Unrecognized request argument supplied: response_format")
        return api_error(502, "upstream down")

    chat_stub.handler = no_response_format
    with backend_for(chat_stub, max_retries=0) as backend:
        with pytest.raises(LLMError, match="HTTP 502: upstream down"):
            backend.complete(ask())
        chat_stub.handler = lambda body: completion('{"sql": "SELECT 1"}')
        backend.complete(ask())
    # both refusals remembered although the call failed: the next one sends no format
    assert chat_stub.formats == ["json_schema", "json_object", None, None]
    assert backend.json_mode == "none"


def test_an_unrelated_500_is_retried_and_reported_not_taken_for_a_refusal(
    chat_stub: ChatStub,
) -> None:
    chat_stub.handler = lambda body: api_error(500, "CUDA out of memory")
    with backend_for(chat_stub, max_retries=1) as backend, pytest.raises(LLMError) as caught:
        backend.complete(ask())
    assert "HTTP 500: CUDA out of memory after 2 attempts" in str(caught.value)
    assert chat_stub.formats == ["json_schema", "json_schema"]
    assert backend.json_mode == "json_schema"


# -- replies that ignore the JSON mode --------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        'Sure! The fixed query is\n{"sql": "SELECT name FROM users"}\nIt selects the names.',
        'Here you go:\n```json\n{"sql": "SELECT name FROM users"}\n```',
        '```\n{"sql": "SELECT name FROM users"}\n```',
    ],
    ids=["prose-around-json", "json-code-block", "bare-code-block"],
)
def test_a_server_that_ignores_response_format_still_gives_the_object(
    chat_stub: ChatStub, reply: str
) -> None:
    chat_stub.handler = lambda body: completion(reply)
    with backend_for(chat_stub) as backend:
        answer = ask_json(backend, ask(), Fix, retries=0)
    assert answer.ok, answer.error
    assert answer.value == Fix(sql="SELECT name FROM users")
    assert chat_stub.formats == ["json_schema"]  # accepted (and ignored) by the server


def test_a_server_that_refuses_seed_is_asked_without_it_from_then_on(
    chat_stub: ChatStub,
) -> None:
    def no_seed(body: dict[str, Any]) -> StubReply:
        if "seed" in body:
            return api_error(400, "Unrecognized request argument supplied: seed")
        return completion('{"sql": "SELECT 1"}')

    chat_stub.handler = no_seed
    with backend_for(chat_stub) as backend:
        assert backend.complete(ask(seed=7)).text == '{"sql": "SELECT 1"}'
        backend.complete(ask(seed=8))
    assert ["seed" in body for body in chat_stub.requests] == [True, False, False]
    assert chat_stub.formats == ["json_schema"] * 3  # the JSON mode was not given up


def test_a_server_that_ignores_seed_is_used_as_is(chat_stub: ChatStub) -> None:
    chat_stub.handler = lambda body: completion('{"sql": "SELECT 1"}')
    with backend_for(chat_stub) as backend:
        texts = {backend.complete(ask(seed=seed)).text for seed in (1, 2, 3)}
    assert texts == {'{"sql": "SELECT 1"}'}  # the same sample thrice: no error, no retry
    assert [body["seed"] for body in chat_stub.requests] == [1, 2, 3]


# -- time limits and what a timeout says -----------------------------------------------


def test_a_slow_server_gets_a_message_naming_the_limit_and_how_to_raise_it(
    chat_stub: ChatStub,
) -> None:
    chat_stub.handler = lambda body: StubReply(body=completion("late").body, delay_s=3)
    started = time.monotonic()
    with backend_for(chat_stub, timeout=0.4) as backend, pytest.raises(LLMError) as caught:
        backend.complete(ask(schema=False))
    assert time.monotonic() - started < 2
    message = str(caught.value)
    assert "no reply within 0.4 s" in message
    assert f"--llm-timeout S or {TIMEOUT_ENV}" in message


def test_a_timeout_after_an_error_reply_says_what_the_reply_was(chat_stub: ChatStub) -> None:
    slow = StubReply(body=completion("late").body, delay_s=3)
    chat_stub.reply(api_error(503, "server busy, 4 requests queued"), slow)
    with (
        backend_for(chat_stub, timeout=0.6, max_retries=2) as backend,
        pytest.raises(LLMError) as caught,
    ):
        backend.complete(ask(schema=False))
    message = str(caught.value)
    assert "HTTP 503: server busy, 4 requests queued, then no reply to the retry within" in message
    assert "no reply within" not in message
    assert len(chat_stub.requests) == 2


def test_the_timeout_comes_from_the_flag_the_environment_or_the_endpoint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(TIMEOUT_ENV, raising=False)
    local = "http://127.0.0.1:8080/v1"
    assert OpenAIBackend("m", base_url=local).timeout == LOOPBACK_TIMEOUT_S
    assert OpenAIBackend("m", base_url="http://localhost:11434/v1").timeout == 300
    assert OpenAIBackend("m", base_url="http://[::1]:8000/v1").timeout == 300
    assert OpenAIBackend("m", base_url="https://api.example.com/v1").timeout == DEFAULT_TIMEOUT_S
    assert OpenAIBackend("m", base_url="http://10.0.0.5:8000/v1").timeout == 60
    monkeypatch.setenv(TIMEOUT_ENV, "42.5")
    assert OpenAIBackend("m", base_url=local).timeout == 42.5
    assert OpenAIBackend("m", base_url=local, timeout=7).timeout == 7
    monkeypatch.setenv(TIMEOUT_ENV, "soon")
    with pytest.raises(LLMSpecError, match=f"{TIMEOUT_ENV}='soon'"):
        OpenAIBackend("m", base_url=local)
    monkeypatch.setenv(TIMEOUT_ENV, "0")
    with pytest.raises(LLMSpecError, match="must be > 0"):
        OpenAIBackend("m", base_url=local)


def test_loopback_hosts() -> None:
    assert is_loopback("http://127.0.0.2:1/v1")
    assert is_loopback("localhost:8080")
    assert not is_loopback("http://localhost.example.com/v1")
    assert not is_loopback(None)


# -- usage ------------------------------------------------------------------------------


def test_cached_prompt_tokens_from_llama_cpp_timings_and_tokens_cached(
    chat_stub: ChatStub,
) -> None:
    server = completion("a", prompt_tokens=900)
    server.body["timings"] = {"cache_n": 850, "prompt_n": 50, "prompt_ms": 120.5}
    older = completion("b", prompt_tokens=900)
    older.body["tokens_cached"] = 640
    no_usage = completion("c")
    del no_usage.body["usage"]
    no_usage.body["timings"] = {"cache_n": 12}
    chat_stub.reply(server, older, no_usage)
    with backend_for(chat_stub) as backend:
        usages = [backend.complete(ask(schema=False)).usage for _ in range(3)]
    assert [u.cached_prompt_tokens for u in usages] == [850, 640, 12]
    assert usages[0].prompt_tokens == 900


# -- the command line -------------------------------------------------------------------


def test_fix_takes_the_call_time_limit_from_llm_timeout(chat_stub: ChatStub, demo_db: str) -> None:
    from typer.testing import CliRunner

    from acts_sql.cli.app import app

    chat_stub.handler = lambda body: StubReply(body=completion("late").body, delay_s=3)
    args = ["fix", "--db", demo_db, "--sql", "SELECT 1", "--question", "one", "--method", "raw"]
    endpoint = ["--llm", "openai:q05", "--base-url", chat_stub.url, "--api-key", "none"]
    started = time.monotonic()
    result = CliRunner().invoke(app, [*args, *endpoint, "--llm-timeout", "0.5", "--json"])
    assert time.monotonic() - started < 2.5
    assert result.exit_code == 1, result.output
    assert "no reply within 0.5 s" in result.stdout
    assert chat_stub.requests  # the call was made, and given up after 0.5 s


def test_batch_and_bench_pass_llm_timeout_to_the_backend(chat_stub: ChatStub) -> None:
    from acts_sql.batch.worker import BatchSettings
    from acts_sql.cli.options import llm_overrides

    settings = BatchSettings(llm="openai:q05", base_url=chat_stub.url, llm_timeout=12.5)
    backend = settings.backend()
    assert isinstance(backend, OpenAIBackend) and backend.timeout == 12.5
    flags = {"base_url": "http://h/v1", "api_key": None, "llm_timeout": 3.0, "method": "raw"}
    assert llm_overrides(flags) == {"base_url": "http://h/v1", "timeout": 3.0}
