"""LLM SPEC strings: how a user names a backend (``--llm SPEC``).

Forms:

- ``openai:MODEL``: an OpenAI-compatible endpoint (``OPENAI_BASE_URL`` /
  ``OPENAI_API_KEY``, or the ``base_url`` / ``api_key`` overrides);
  ``openai:`` alone takes the model from ``ACTS_SQL_MODEL``.
- ``scripted:PATH``: canned responses from a JSON file (tests, demos).
- ``local:NAME`` or ``local:PATH.gguf``: the embedded local model, which is
  not part of this build yet (a clear error says so).
- no SPEC: ``openai:`` if ``OPENAI_BASE_URL`` or ``OPENAI_API_KEY`` is set,
  otherwise an error explaining how to configure one.

Overrides that do not apply to the chosen backend are ignored (a CLI may pass
all its flags every time), and ``None`` values mean "not given"; an override
no backend knows is an error.
"""

from __future__ import annotations

import os
from typing import Any

from acts_sql.errors import LLMSpecError
from acts_sql.llm.base import LLMBackend
from acts_sql.llm.openai_backend import OpenAIBackend
from acts_sql.llm.scripted import ScriptedBackend

__all__ = ["DEFAULT_MODEL", "SPEC_FORMS", "parse_llm_spec"]

DEFAULT_MODEL = "gpt-4o-mini"
SPEC_FORMS = "openai:MODEL, scripted:PATH, local:NAME or local:PATH.gguf"
_OPENAI_OPTIONS = frozenset({"base_url", "api_key", "timeout", "max_retries", "backoff_s"})
_SCRIPTED_OPTIONS = frozenset({"delay_s"})
_KNOWN_OPTIONS = _OPENAI_OPTIONS | _SCRIPTED_OPTIONS


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
    raise LLMSpecError(
        f"LLM spec {text!r}: the local backend (llama-cpp-python with a GGUF model) is not "
        "installed in this build; use openai:MODEL with an OpenAI-compatible endpoint, "
        "or scripted:PATH",
        spec=text,
    )


def _default(given: dict[str, Any]) -> LLMBackend:
    configured = (
        os.environ.get("OPENAI_BASE_URL")
        or os.environ.get("OPENAI_API_KEY")
        or given.get("base_url")
    )
    if configured:
        return _openai(_env_model(), given)
    raise LLMSpecError(
        "no LLM configured: set OPENAI_BASE_URL (and OPENAI_API_KEY if the server needs one) "
        f"and optionally ACTS_SQL_MODEL, or pass an LLM spec ({SPEC_FORMS}); "
        "the embedded local model is not installed in this build"
    )


def _openai(model: str, given: dict[str, Any]) -> OpenAIBackend:
    return OpenAIBackend(model, **_pick(given, _OPENAI_OPTIONS))


def _env_model() -> str:
    return os.environ.get("ACTS_SQL_MODEL", "").strip() or DEFAULT_MODEL


def _pick(given: dict[str, Any], names: frozenset[str]) -> dict[str, Any]:
    return {key: value for key, value in given.items() if key in names}
