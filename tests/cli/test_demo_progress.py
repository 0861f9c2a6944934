"""The demo's progress lines: an LLM call line with its cached share, other events as `fix`."""

from io import StringIO

from rich.console import Console

from acts_sql.cli.demo import demo_progress
from acts_sql.engine.events import EVENT_TYPES, LlmCallData


def _printed(event) -> str:
    out = StringIO()
    demo_progress(Console(file=out, width=200))(event)
    return out.getvalue()


def llm_call(**data) -> object:
    return EVENT_TYPES[LlmCallData](seq=1, t=0.0, purpose="plan", data=LlmCallData(**data))


def test_an_answered_llm_call_shows_its_tokens_cached_share_and_time():
    line = _printed(
        llm_call(
            ok=True, prompt_tokens=900, cached_prompt_tokens=700, completion_tokens=41, seconds=2.25
        )
    )
    assert "LLM plan: 900 prompt tokens (700 cached) + 41 written, 2.2 s" in line


def test_a_failed_llm_call_is_not_shown_as_tokens():
    assert "prompt tokens" not in _printed(llm_call(ok=False, error="timed out"))
