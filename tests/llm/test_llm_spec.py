"""parse_llm_spec: openai:, scripted:, local:, no SPEC, and the errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acts_sql.errors import ConfigError, LLMSpecError
from acts_sql.llm.local import LocalBackend
from acts_sql.llm.openai_backend import OpenAIBackend
from acts_sql.llm.scripted import ScriptedBackend
from acts_sql.llm.spec import parse_llm_spec


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ACTS_SQL_MODEL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"plan": ["{}"]}), encoding="utf-8")
    return path


def test_openai_model_with_overrides() -> None:
    backend = parse_llm_spec(
        "openai:qwen2.5-coder:7b",
        base_url="http://127.0.0.1:11434/v1",
        api_key="k",
        timeout=12.5,
        max_retries=4,
    )
    assert isinstance(backend, OpenAIBackend)
    assert backend.model == "qwen2.5-coder:7b"  # only the first colon separates the scheme
    assert backend.endpoint == "http://127.0.0.1:11434/v1"
    assert backend.timeout == 12.5
    assert backend.max_retries == 4


def test_openai_without_model_uses_acts_sql_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACTS_SQL_MODEL", "deepseek-chat")
    backend = parse_llm_spec("openai:", base_url="http://127.0.0.1:8000/v1")
    assert isinstance(backend, OpenAIBackend)
    assert backend.model == "deepseek-chat"


def test_scripted_path(script: Path) -> None:
    backend = parse_llm_spec(f"scripted:{script}", delay_s=0.01)
    assert isinstance(backend, ScriptedBackend)
    assert backend.remaining() == {"plan": 1}
    assert backend.delay_s == 0.01


def test_overrides_for_another_backend_are_ignored(script: Path) -> None:
    backend = parse_llm_spec(f"scripted:{script}", base_url="http://x/v1", timeout=60)
    assert isinstance(backend, ScriptedBackend)


def test_scripted_missing_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(LLMSpecError, match=r"missing\.json: file not found"):
        parse_llm_spec(f"scripted:{tmp_path / 'missing.json'}")


def test_scripted_without_path() -> None:
    with pytest.raises(LLMSpecError, match="scripted:PATH"):
        parse_llm_spec("scripted:")


@pytest.fixture
def with_llama_cpp(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pretend llama-cpp-python is installed (building a backend does not import it)."""
    monkeypatch.setattr("acts_sql.llm.local.backend.llama_cpp_available", lambda: True)


@pytest.fixture
def without_llama_cpp(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("acts_sql.llm.local.backend.llama_cpp_available", lambda: False)


@pytest.mark.parametrize(
    ("spec", "name"),
    [
        ("local:qwen2.5-coder-0.5b", "local:qwen2.5-coder-0.5b"),
        ("local:Qwen2.5-Coder-1.5B", "local:qwen2.5-coder-1.5b"),
        ("local:", "local:qwen2.5-coder-1.5b"),
    ],
)
@pytest.mark.usefixtures("with_llama_cpp")
def test_local_names_build_the_local_backend(spec: str, name: str) -> None:
    backend = parse_llm_spec(spec, n_ctx=4096, n_threads=1, base_url="http://x/v1")
    assert isinstance(backend, LocalBackend)
    assert backend.name == name
    assert (backend.n_ctx, backend.n_threads) == (4096, 1)


@pytest.mark.usefixtures("with_llama_cpp")
def test_local_gguf_path(tmp_path: Path) -> None:
    model = tmp_path / "my model.gguf"
    model.write_bytes(b"GGUF")
    backend = parse_llm_spec(f"local:{model}")
    assert isinstance(backend, LocalBackend)
    assert backend.name == f"local:{model}"
    with pytest.raises(LLMSpecError, match="no such model file"):
        parse_llm_spec(f"local:{tmp_path / 'missing.gguf'}")


@pytest.mark.usefixtures("with_llama_cpp")
def test_local_unknown_name_lists_the_models() -> None:
    with pytest.raises(LLMSpecError) as caught:
        parse_llm_spec("local:llama-70b")
    message = str(caught.value)
    assert "unknown local model 'llama-70b'" in message
    assert "qwen2.5-coder-0.5b" in message and "qwen2.5-coder-1.5b" in message


@pytest.mark.parametrize("spec", ["local:qwen2.5-coder-0.5b", "local:/models/qwen.gguf"])
@pytest.mark.usefixtures("without_llama_cpp")
def test_local_without_llama_cpp_says_how_to_install_it(spec: str) -> None:
    with pytest.raises(LLMSpecError) as caught:
        parse_llm_spec(spec)
    message = str(caught.value)
    assert "local backend needs llama-cpp-python" in message
    assert "pip install 'acts-sql[local]'" in message
    assert "openai:MODEL" in message


def test_no_spec_uses_openai_when_an_endpoint_is_configured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
    backend = parse_llm_spec(None)
    assert isinstance(backend, OpenAIBackend)
    assert backend.model == "gpt-4o-mini"
    assert backend.endpoint == "http://127.0.0.1:8080/v1"


def test_no_spec_with_only_a_key_uses_acts_sql_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ACTS_SQL_MODEL", "gpt-4.1-mini")
    backend = parse_llm_spec("")
    assert isinstance(backend, OpenAIBackend)
    assert backend.model == "gpt-4.1-mini"


@pytest.mark.usefixtures("with_llama_cpp")
def test_no_spec_and_no_endpoint_is_the_embedded_model() -> None:
    backend = parse_llm_spec(None)
    assert isinstance(backend, LocalBackend)
    assert backend.name == "local:qwen2.5-coder-1.5b"


@pytest.mark.usefixtures("without_llama_cpp")
def test_no_spec_without_llama_cpp_explains_how() -> None:
    with pytest.raises(LLMSpecError) as caught:
        parse_llm_spec(None)
    message = str(caught.value)
    assert "no LLM configured" in message
    assert "pip install 'acts-sql[local]'" in message
    assert "OPENAI_BASE_URL" in message
    assert "openai:MODEL" in message
    assert isinstance(caught.value, ConfigError)


@pytest.mark.parametrize("spec", ["gpt-4o", "anthropic:claude", "ollama:qwen"])
def test_unknown_forms_list_the_valid_ones(spec: str) -> None:
    with pytest.raises(LLMSpecError) as caught:
        parse_llm_spec(spec)
    message = str(caught.value)
    assert repr(spec) in message
    for form in ("openai:MODEL", "scripted:PATH", "local:NAME", "local:PATH.gguf"):
        assert form in message


def test_unknown_override_is_an_error(script: Path) -> None:
    with pytest.raises(LLMSpecError, match="unknown LLM option"):
        parse_llm_spec(f"scripted:{script}", temprature=0.2)
