"""An LLM backend that cannot be used at all: raised before any reply, a result after one."""

from __future__ import annotations

import socket

import pytest

from acts_sql import CorrectionOptions, correct
from acts_sql.engine.events import TraceEvent
from acts_sql.errors import LLMError, LLMUnavailableError, ScriptExhaustedError
from acts_sql.llm.base import LLMRequest, LLMResponse
from acts_sql.llm.local import LocalModelLoadError
from acts_sql.llm.models import ModelError
from acts_sql.llm.openai_backend import OpenAIBackend
from support import demo_script, scripted


def closed_port_url() -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


class DiesAfter:
    """Answers from a script for `replies` calls, then its endpoint is gone."""

    def __init__(self, script: dict, replies: int, error: LLMError) -> None:
        self.inner = scripted(script)
        self.name = "dies-after"
        self.left = replies
        self.error = error

    def complete(self, request: LLMRequest) -> LLMResponse:
        if self.left <= 0:
            raise self.error
        self.left -= 1
        return self.inner.complete(request)


@pytest.mark.parametrize("sql_given", [True, False], ids=["correct", "text-to-sql"])
@pytest.mark.parametrize("method", ["acts", "linear", "raw", "critic", "vote"])
def test_an_unreachable_endpoint_raises_before_any_result(demo_db, demo_tasks, method, sql_given):
    task = demo_tasks["figure3"]
    events: list[TraceEvent] = []
    backend = OpenAIBackend("m", base_url=closed_port_url(), api_key="k", max_retries=0)
    with pytest.raises(LLMUnavailableError) as caught:
        correct(
            demo_db,
            task.question,
            task.sql if sql_given else None,
            llm=backend,
            options=CorrectionOptions(method=method),
            on_event=events.append,
        )
    assert caught.value.before_any_reply
    assert "cannot connect" in str(caught.value)
    failed = [e for e in events if e.kind == "llm_call"]
    assert len(failed) == 1 and failed[0].data["before_any_reply"] is True
    assert not [e for e in events if e.kind == "run_finished"]


def test_an_endpoint_that_dies_mid_run_ends_it_with_the_best_candidate(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    gone = LLMUnavailableError("LLM endpoint http://x/v1 (model m): cannot connect (refused)")
    llm = DiesAfter(demo_script("figure3"), replies=2, error=gone)
    # the gate's raw samples would take the script's one `correct` reply first
    options = CorrectionOptions(evidence_gate=False)
    result = correct(demo_db, task.question, task.sql, llm=llm, options=options)
    assert result.accepted is False
    assert result.reason.startswith("LLM backend failed: LLM endpoint http://x/v1")
    assert result.usage.llm_calls == 2
    assert not gone.before_any_reply
    assert any(e.kind == "llm_failed" for e in result.trace)


def test_a_model_that_answers_badly_from_the_first_call_is_still_a_result(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    exhausted = ScriptExhaustedError("the script has no reply")
    result = correct(demo_db, task.question, task.sql, llm=DiesAfter({}, 0, exhausted))
    assert result.accepted is False and "LLM backend failed" in result.reason
    assert result.sql == task.sql  # the user's SQL comes back, as documented


def test_local_models_that_cannot_be_made_ready_are_unavailable_backends():
    assert issubclass(ModelError, LLMUnavailableError)
    assert issubclass(LocalModelLoadError, LLMUnavailableError)
