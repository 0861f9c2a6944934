"""ScriptedBackend: responses per purpose in order, exhaustion, malformed files."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from acts_sql.errors import ConfigError, LLMError, LLMSpecError, ScriptExhaustedError
from acts_sql.llm.base import LLMBackend, LLMRequest, Message
from acts_sql.llm.scripted import ScriptedBackend


def ask(backend: ScriptedBackend, purpose: str, prompt: str = "question") -> str:
    request = LLMRequest(purpose=purpose, messages=[Message(role="user", content=prompt)])
    return backend.complete(request).text


def write(tmp_path: Path, content: str) -> Path:
    path = tmp_path / "script.json"
    path.write_text(content, encoding="utf-8")
    return path


def test_each_purpose_replays_its_own_responses_in_order() -> None:
    backend = ScriptedBackend({"plan": ["p1", "p2"], "judge": ["j1", "j2", "j3"]})
    assert ask(backend, "judge") == "j1"
    assert ask(backend, "plan") == "p1"
    assert ask(backend, "judge") == "j2"
    assert ask(backend, "plan") == "p2"
    assert ask(backend, "judge") == "j3"
    assert backend.remaining() == {"plan": 0, "judge": 0}
    assert backend.used() == {"plan": 2, "judge": 3}


def test_remaining_counts_down_per_purpose() -> None:
    backend = ScriptedBackend({"plan": ["a"], "generate_sql": ["b", "c"]})
    assert backend.remaining() == {"plan": 1, "generate_sql": 2}
    ask(backend, "generate_sql")
    assert backend.remaining() == {"plan": 1, "generate_sql": 1}


def test_running_out_names_the_purpose_and_how_many_were_used() -> None:
    backend = ScriptedBackend({"judge": ["one", "two"]})
    ask(backend, "judge")
    ask(backend, "judge")
    with pytest.raises(ScriptExhaustedError) as caught:
        ask(backend, "judge")
    message = str(caught.value)
    assert "'judge'" in message
    assert "2" in message
    assert caught.value.details["purpose"] == "judge"
    assert caught.value.details["used"] == 2
    assert isinstance(caught.value, LLMError)


def test_a_purpose_missing_from_the_script_is_exhausted_at_once() -> None:
    backend = ScriptedBackend({"plan": ["x"], "judge": ["y"]})
    with pytest.raises(ScriptExhaustedError) as caught:
        ask(backend, "choose")
    message = str(caught.value)
    assert "'choose'" in message
    assert "plan, judge" in message
    assert backend.remaining() == {"plan": 1, "judge": 1}


def test_loads_a_file_and_names_itself_after_it(tmp_path: Path) -> None:
    path = write(tmp_path, json.dumps({"plan": ['{"cursor": "n1", "nodes": []}']}))
    backend = ScriptedBackend.from_file(path)
    assert isinstance(backend, LLMBackend)
    assert backend.name == f"scripted:{path}"
    assert json.loads(ask(backend, "plan")) == {"cursor": "n1", "nodes": []}


def test_exhaustion_from_a_file_names_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, json.dumps({"plan": []}))
    with pytest.raises(ScriptExhaustedError, match=r"script\.json"):
        ask(ScriptedBackend.from_file(path), "plan")


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("{not json", "not valid JSON (line 1, column 2"),
        ("", "not valid JSON"),
        ('["plan", "judge"]', "expected a JSON object mapping purposes to lists"),
        (
            '{"plan": "just one string"}',
            "purpose 'plan' must map to a list of strings, got a string",
        ),
        ('{"plan": {"a": 1}}', "purpose 'plan' must map to a list of strings, got an object"),
        ('{"plan": ["ok", {"cursor": "n1"}]}', "purpose 'plan', response 2 must be a string"),
        ('{"plan": ["ok", null]}', "got null"),
        ('{"": ["x"]}', "purposes must be non-empty strings"),
    ],
    ids=["syntax", "empty", "list", "string", "object", "object-item", "null-item", "empty-key"],
)
def test_malformed_files_raise_a_one_line_spec_error_naming_the_file(
    tmp_path: Path, content: str, reason: str
) -> None:
    path = write(tmp_path, content)
    with pytest.raises(LLMSpecError) as caught:
        ScriptedBackend.from_file(path)
    message = str(caught.value)
    assert reason in message
    assert str(path) in message
    assert "\n" not in message
    assert isinstance(caught.value, ConfigError)


def test_missing_file_raises_spec_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(LLMSpecError, match=r"nope\.json: file not found"):
        ScriptedBackend.from_file(missing)


def test_malformed_dict_is_rejected_too() -> None:
    with pytest.raises(LLMSpecError, match="purpose 'plan' must map to a list"):
        ScriptedBackend({"plan": 3})  # type: ignore[dict-item]


def test_usage_is_an_estimate_of_four_characters_per_token() -> None:
    backend = ScriptedBackend({"generate_sql": ["x" * 40]})
    request = LLMRequest(
        purpose="generate_sql",
        messages=[
            Message(role="system", content="s" * 10),
            Message(role="user", content="u" * 11),
        ],
    )
    usage = backend.complete(request).usage
    assert usage.purpose == "generate_sql"
    assert usage.prompt_tokens == 6  # 21 characters, rounded up
    assert usage.completion_tokens == 10
    assert usage.cached_prompt_tokens == 0


def test_delay_simulates_latency_and_is_measured() -> None:
    backend = ScriptedBackend({"plan": ["a", "b"]}, delay_s=0.05)
    started = time.perf_counter()
    request = LLMRequest(purpose="plan", messages=[Message(role="user", content="q")])
    first = backend.complete(request)
    backend.complete(request)
    assert time.perf_counter() - started >= 0.1
    assert first.usage.seconds >= 0.05


def test_negative_delay_is_a_configuration_error() -> None:
    with pytest.raises(LLMSpecError, match="delay_s"):
        ScriptedBackend({"plan": []}, delay_s=-1)
