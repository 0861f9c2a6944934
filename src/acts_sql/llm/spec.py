"""LLM SPEC strings: how a user names a backend (``--llm SPEC``).

Forms:

- ``openai:MODEL``: an OpenAI-compatible endpoint (``OPENAI_BASE_URL`` /
  ``OPENAI_API_KEY``, or the ``base_url`` / ``api_key`` overrides);
  ``openai:`` alone takes the model from ``ACTS_SQL_MODEL``.
- ``scripted:PATH``: canned responses from a JSON file (tests, demos).
- ``local:NAME`` or ``local:PATH.gguf``: a GGUF model in process with
  llama-cpp-python (``acts_sql.llm.local``); ``local:`` alone is the default
  embedded model, qwen2.5-coder-1.5b. Without llama-cpp-python: an error that
  says ``pip install 'acts-sql[local]'``.
- no SPEC: ``openai:`` if ``OPENAI_BASE_URL`` or ``OPENAI_API_KEY`` is set,
  otherwise the embedded local model (or, when llama-cpp-python is not
  installed, an error explaining both ways to configure an LLM).

Building a backend is cheap: the local model is assembled and loaded on its
first call (or by ``LocalBackend.load``).

Overrides that do not apply to the chosen backend are ignored (a CLI may pass
all its flags every time), and ``None`` values mean "not given"; an override
no backend knows is an error.
"""

from __future__ import annotations

import os
from typing import Any

from acts_sql.errors import LLMSpecError
from acts_sql.llm.base import LLMBackend
from acts_sql.llm.local import backend as local
from acts_sql.llm.models import DEFAULT_LOCAL_MODEL
from acts_sql.llm.openai_backend import OpenAIBackend
from acts_sql.llm.scripted import ScriptedBackend

__all__ = ["DEFAULT_MODEL", "SPEC_FORMS", "parse_llm_spec"]

DEFAULT_MODEL = "gpt-4o-mini"
SPEC_FORMS = "openai:MODEL, scripted:PATH, local:NAME or local:PATH.gguf"
_OPENAI_OPTIONS = frozenset({"base_url", "api_key", "timeout", "max_retries", "backoff_s"})
_SCRIPTED_OPTIONS = frozenset({"delay_s"})
_LOCAL_OPTIONS = frozenset(
    {"n_ctx", "n_threads", "seed", "max_tokens", "cache_dir", "installer", "progress"}
)
_KNOWN_OPTIONS = _OPENAI_OPTIONS | _SCRIPTED_OPTIONS | _LOCAL_OPTIONS


def parse_llm_spec(spec: str | None, **overrides: Any) -> LLMBackend:
    """The backend a SPEC names; raises LLMSpecError with a one-line reason."""
    unknown = sorted(set(overrides) - _KNOWN_OPTIONS)
    if unknown:
        raise LLMSpecError(
            f"unknown LLM option(s): {', '.join(unknown)} "
            f"(known: {', '.join(sorted(_KNOWN_OPTIONS))})",
            options=unknown,
        )
    given = {key: value for key, value in overrides.items() if value is not None}
    text = (spec or "").strip()
    if not text:
        return _default(given)
    scheme, colon, rest = text.partition(":")
    scheme = scheme.strip().lower()
    rest = rest.strip()
    if not colon or scheme not in {"openai", "scripted", "local"}:
        raise LLMSpecError(f"unknown LLM spec {text!r}: use {SPEC_FORMS}", spec=text)
    if scheme == "openai":
        return _openai(rest or _env_model(), given)
    if scheme == "scripted":
        if not rest:
            raise LLMSpecError("LLM spec 'scripted:' needs a file: scripted:PATH", spec=text)
        return ScriptedBackend.from_file(rest, **_pick(given, _SCRIPTED_OPTIONS))
    return _local(rest or DEFAULT_LOCAL_MODEL, given)


def _default(given: dict[str, Any]) -> LLMBackend:
    configured = (
        os.environ.get("OPENAI_BASE_URL")
        or os.environ.get("OPENAI_API_KEY")
        or given.get("base_url")
    )
    if configured:
        return _openai(_env_model(), given)
    if not local.llama_cpp_available():
        raise LLMSpecError(
            "no LLM configured: the embedded local model needs llama-cpp-python "
            f"({local.INSTALL_HINT}); or set OPENAI_BASE_URL (and OPENAI_API_KEY if the server "
            f"needs one) and optionally ACTS_SQL_MODEL, or pass an LLM spec ({SPEC_FORMS})"
        )
    return _local(DEFAULT_LOCAL_MODEL, given)


def _local(model: str, given: dict[str, Any]) -> local.LocalBackend:
    return local.LocalBackend(model, **_pick(given, _LOCAL_OPTIONS))


def _openai(model: str, given: dict[str, Any]) -> OpenAIBackend:
    return OpenAIBackend(model, **_pick(given, _OPENAI_OPTIONS))


def _env_model() -> str:
    return os.environ.get("ACTS_SQL_MODEL", "").strip() or DEFAULT_MODEL


def _pick(given: dict[str, Any], names: frozenset[str]) -> dict[str, Any]:
    return {key: value for key, value in given.items() if key in names}
