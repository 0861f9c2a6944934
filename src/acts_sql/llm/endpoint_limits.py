"""The per-call time limit of an OpenAI-compatible endpoint, and what sets it.

In order: the ``timeout`` given (``--llm-timeout S``, the service's ``[llm]
timeout``), else the environment variable ``ACTS_SQL_LLM_TIMEOUT``, else a
default that depends on where the endpoint is: a loopback endpoint
(``127.0.0.1``, ``localhost``, ``::1``) is usually a model on this machine's
CPU, where a cold prompt of a thousand tokens can take minutes, so it gets
:data:`LOOPBACK_TIMEOUT_S`; any other gets :data:`DEFAULT_TIMEOUT_S`.
"""

from __future__ import annotations

import ipaddress
import os
from urllib.parse import urlsplit

from acts_sql.errors import LLMSpecError

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "LOOPBACK_TIMEOUT_S",
    "TIMEOUT_ENV",
    "is_loopback",
    "resolve_timeout",
]

DEFAULT_TIMEOUT_S = 60.0
LOOPBACK_TIMEOUT_S = 300.0
TIMEOUT_ENV = "ACTS_SQL_LLM_TIMEOUT"


def resolve_timeout(timeout: float | None, base_url: str | None) -> float:
    """Seconds one call to `base_url` may take; LLMSpecError for a value that is not > 0."""
    if timeout is not None:
        return _positive(timeout, "timeout")
    configured = os.environ.get(TIMEOUT_ENV, "").strip()
    if configured:
        try:
            value = float(configured)
        except ValueError:
            raise LLMSpecError(
                f"{TIMEOUT_ENV}={configured!r}: expected a number of seconds"
            ) from None
        return _positive(value, TIMEOUT_ENV)
    return LOOPBACK_TIMEOUT_S if is_loopback(base_url) else DEFAULT_TIMEOUT_S


def is_loopback(url: str | None) -> bool:
    """True when `url` names this machine (localhost or a loopback address)."""
    if not url:
        return False
    host = (urlsplit(url if "//" in url else f"//{url}").hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _positive(value: float, name: str) -> float:
    if not value or value <= 0:
        raise LLMSpecError(f"openai backend: {name} must be > 0 seconds, got {value}")
    return float(value)
