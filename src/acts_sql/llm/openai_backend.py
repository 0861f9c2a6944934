"""Backend for any OpenAI-compatible chat completions endpoint (openai SDK).

Works with OpenAI, vLLM, Ollama, llama.cpp server, DeepSeek and the like.

- Endpoint and key default to ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``. A
  local server that needs no key gets a placeholder key; the official API
  without a key is a configuration error.
- ``timeout`` bounds a whole :meth:`OpenAIBackend.complete` call, retries
  included: each attempt may use only the time left (as the HTTP timeout), a
  retry is made only if its back-off fits in what is left, and a timed-out
  attempt is not retried. A request's ``timeout_s`` (what is left of the
  run) lowers that bound for its call; running out of it raises
  :class:`~acts_sql.errors.LLMDeadlineError`.
- Up to ``max_retries`` retries, with exponential back-off (or the server's
  ``Retry-After``), on 408, 409, 429, 5xx and connection failures. Any final
  failure raises :class:`~acts_sql.errors.LLMError` with a one-line message
  naming the endpoint and the HTTP status: an
  :class:`~acts_sql.errors.LLMUnavailableError` when the endpoint cannot be
  used at all (no connection after the retries; HTTP 401, 403 or 404).
- A request with ``json_schema`` asks for JSON output with ``response_format``
  ``json_schema``; a server that rejects it (HTTP 400/422) is asked again with
  ``json_object``, then with no ``response_format``. The first mode that works
  is remembered for the life of the backend, so the probing happens once.
- A leading ``<think>...</think>`` block (reasoning models served locally) is
  removed from the reply text.
"""

from __future__ import annotations

import json
import os
import random
import re
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from acts_sql.errors import LLMDeadlineError, LLMError, LLMSpecError, LLMUnavailableError
from acts_sql.llm.base import LLMRequest, LLMResponse, Usage

if TYPE_CHECKING:
    import openai

__all__ = ["JsonMode", "OpenAIBackend"]

JsonMode = Literal["json_schema", "json_object", "none"]
_JSON_MODES: tuple[JsonMode, ...] = ("json_schema", "json_object", "none")
_RETRY_STATUSES = frozenset({408, 409, 429})
_FORMAT_REJECTED_STATUSES = frozenset({400, 422})
_UNUSABLE_STATUSES = frozenset({401, 403, 404})
"""Statuses that every request of this configuration would get: the endpoint is unusable."""
_MAX_BACKOFF_S = 8.0
_PLACEHOLDER_KEY = "sk-no-key-required"
_THINK = re.compile(r"\A\s*<think>.*?</think>\s*", re.DOTALL)
_HINTS = {
    401: "check the API key (OPENAI_API_KEY)",
    403: "check the API key's permissions",
    404: "check the model name and the base URL (it usually ends in /v1)",
}


@dataclass(frozen=True)
class _Deadline:
    """When a call must be over (``time.monotonic``), after how many seconds,
    and whether the request's ``timeout_s`` (not the backend's own) set it."""

    at: float
    seconds: float
    by_request: bool


class OpenAIBackend:
    """An LLMBackend that calls ``POST {base_url}/chat/completions``."""

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        *,
        backoff_s: float = 0.5,
    ) -> None:
        import openai  # imported here: the SDK is slow to import and only needed now

        if not model or not model.strip():
            raise LLMSpecError("openai backend: a model name is required (openai:MODEL)")
        if not timeout or timeout <= 0:
            raise LLMSpecError(f"openai backend: timeout must be > 0 seconds, got {timeout}")
        if max_retries < 0:
            raise LLMSpecError(f"openai backend: max_retries must be >= 0, got {max_retries}")
        if backoff_s < 0:
            raise LLMSpecError(f"openai backend: backoff_s must be >= 0, got {backoff_s}")
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        api_key = api_key or os.environ.get("OPENAI_API_KEY") or None
        if api_key is None:
            if base_url is None:
                raise LLMSpecError(
                    "openai backend: no API key; set OPENAI_API_KEY, or set OPENAI_BASE_URL "
                    "to a local OpenAI-compatible server that needs none"
                )
            api_key = _PLACEHOLDER_KEY
        self.model = model.strip()
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.backoff_s = float(backoff_s)
        self.name = f"openai:{self.model}"
        self._openai = openai
        self._client = openai.OpenAI(
            api_key=api_key, base_url=base_url, timeout=self.timeout, max_retries=0
        )
        self.endpoint = str(self._client.base_url).rstrip("/")
        self._json_mode_index = 0
        self._lock = threading.Lock()

    @property
    def json_mode(self) -> JsonMode:
        """How JSON output is requested: the best mode the server has accepted so far."""
        return _JSON_MODES[self._json_mode_index]

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> OpenAIBackend:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def complete(self, request: LLMRequest) -> LLMResponse:
        started = time.monotonic()
        limit, by_request = self.timeout, False
        if request.timeout_s is not None and request.timeout_s < limit:
            limit, by_request = request.timeout_s, True
        deadline = _Deadline(started + limit, limit, by_request)
        if limit <= 0:
            raise self._timed_out(request, deadline, 0)
        if request.json_schema is None:
            data, attempts = self._post(request, None, deadline)
        else:
            data, attempts = self._post_json(request, deadline)
        text, usage = self._parse(data, request, attempts)
        usage.seconds = time.monotonic() - started
        return LLMResponse(text=text, usage=usage)

    # -- JSON mode negotiation -------------------------------------------------------

    def _post_json(self, request: LLMRequest, deadline: _Deadline) -> tuple[dict[str, Any], int]:
        first = self._json_mode_index
        for index in range(first, len(_JSON_MODES)):
            try:
                reply = self._post(request, _JSON_MODES[index], deadline)
            except LLMError as exc:
                rejected = exc.details.get("status") in _FORMAT_REJECTED_STATUSES
                if rejected and index + 1 < len(_JSON_MODES):
                    continue
                raise
            if index != first:
                with self._lock:
                    self._json_mode_index = max(self._json_mode_index, index)
            return reply
        raise AssertionError("unreachable: the last JSON mode re-raises")  # pragma: no cover

    # -- one request, with retries -------------------------------------------------

    def _post(
        self, request: LLMRequest, mode: JsonMode | None, deadline: _Deadline
    ) -> tuple[dict[str, Any], int]:
        """The decoded response body and the number of attempts it took."""
        openai = self._openai
        kwargs = self._arguments(request, mode)
        attempt = 0
        while True:
            attempt += 1
            left = deadline.at - time.monotonic()
            if left <= 0:
                raise self._timed_out(request, deadline, attempt - 1)
            try:
                raw = self._client.chat.completions.with_raw_response.create(**kwargs, timeout=left)
            except openai.APITimeoutError:
                raise self._timed_out(request, deadline, attempt) from None
            except openai.APIConnectionError as exc:
                failure = f"cannot connect ({_cause(exc)})"
                status, retry_after, unreachable = None, None, True
            except openai.APIStatusError as exc:
                status = exc.status_code
                failure = f"HTTP {status}: {_status_detail(exc)}"
                if status in _HINTS:
                    failure += f" ({_HINTS[status]})"
                if not (status in _RETRY_STATUSES or status >= 500):
                    raise self._error(failure, request, attempt, status=status) from None
                retry_after, unreachable = _retry_after(exc.response.headers), False
            except openai.OpenAIError as exc:  # anything else the SDK reports: not retried
                failure = f"request failed ({type(exc).__name__}: {_one_line(str(exc), 160)})"
                raise self._error(failure, request, attempt, status=None) from None
            else:
                return self._body(raw.text, request, attempt, raw.status_code), attempt
            delay = self._delay(attempt, retry_after)
            if attempt > self.max_retries or time.monotonic() + delay >= deadline.at:
                raise self._error(failure, request, attempt, status=status, unusable=unreachable)
            time.sleep(delay)

    def _arguments(self, request: LLMRequest, mode: JsonMode | None) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": message.role, "content": message.content} for message in request.messages
            ],
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
        }
        if request.seed is not None:
            kwargs["seed"] = request.seed
        if mode == "json_schema" and request.json_schema is not None:
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": _schema_name(request.json_schema, request.purpose),
                    "schema": request.json_schema,
                    "strict": False,
                },
            }
        elif mode == "json_object":
            kwargs["response_format"] = {"type": "json_object"}
        return kwargs

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None and retry_after >= 0:
            return retry_after
        backoff = min(self.backoff_s * 2.0 ** (attempt - 1), _MAX_BACKOFF_S)
        return backoff * (1 - 0.25 * random.random())

    # -- response ----------------------------------------------------------------------

    def _body(self, text: str, request: LLMRequest, attempt: int, status: int) -> dict[str, Any]:
        try:
            data = json.loads(text)
        except ValueError:
            raise self._error(
                f"malformed response: body is not JSON ({_one_line(text, 80)!r})",
                request,
                attempt,
                status=status,
            ) from None
        if not isinstance(data, dict):
            raise self._error(
                "malformed response: body is not a JSON object", request, attempt, status=status
            )
        if "choices" not in data and isinstance(data.get("error"), dict | str):
            raise self._error(
                f"error in response: {_error_text(data['error'])}", request, attempt, status=status
            )
        return data

    def _parse(self, data: dict[str, Any], request: LLMRequest, attempts: int) -> tuple[str, Usage]:
        choices = data.get("choices")
        choice = choices[0] if isinstance(choices, list) and choices else None
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            raise self._error(
                "malformed response: no choices[0].message", request, attempts, status=200
            )
        content = message.get("content")
        if not isinstance(content, str):
            content = message.get("refusal")
        if not isinstance(content, str):
            raise self._error(
                "malformed response: the message has no text content", request, attempts, status=200
            )
        usage = _usage(data.get("usage"), request.purpose)
        finish = choice.get("finish_reason") if isinstance(choice, dict) else None
        if isinstance(finish, str) and finish:
            usage.stopped_by = finish
        return _THINK.sub("", content, count=1), usage

    # -- errors -------------------------------------------------------------------------

    def _where(self) -> str:
        return f"LLM endpoint {self.endpoint} (model {self.model}):"

    def _timed_out(self, request: LLMRequest, deadline: _Deadline, attempts: int) -> LLMError:
        """No reply in time: an LLMDeadlineError when the request's own deadline was the limit."""
        if not deadline.by_request:
            return self._error(
                f"no reply within {deadline.seconds:g} s", request, attempts, status=None
            )
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        return LLMDeadlineError(
            f"wall time: {self._where()} no reply to the {request.purpose} request within "
            f"{deadline.seconds:.2f} s, what was left of the run's time{tries}",
            endpoint=self.endpoint,
            model=self.model,
            status=None,
            attempts=attempts,
            purpose=request.purpose,
            seconds=deadline.seconds,
        )

    def _error(
        self,
        failure: str,
        request: LLMRequest,
        attempts: int,
        *,
        status: int | None,
        unusable: bool = False,
    ) -> LLMError:
        """The failure as an LLMError; an LLMUnavailableError when no request could work."""
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        kind = LLMUnavailableError if unusable or status in _UNUSABLE_STATUSES else LLMError
        return kind(
            f"{self._where()} {failure}{tries}",
            endpoint=self.endpoint,
            model=self.model,
            status=status,
            attempts=attempts,
            purpose=request.purpose,
        )


def _usage(raw: Any, purpose: str) -> Usage:
    if not isinstance(raw, dict):
        return Usage(purpose=purpose)
    details = raw.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    if cached is None:
        cached = raw.get("prompt_cache_hit_tokens")  # DeepSeek
    return Usage(
        purpose=purpose,
        prompt_tokens=_int(raw.get("prompt_tokens")),
        completion_tokens=_int(raw.get("completion_tokens")),
        cached_prompt_tokens=_int(cached),
    )


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _schema_name(schema: dict[str, Any], purpose: str) -> str:
    title = schema.get("title")
    raw = title if isinstance(title, str) and title else purpose
    return re.sub(r"[^A-Za-z0-9_-]", "_", raw)[:64] or "reply"


def _retry_after(headers: Any) -> float | None:
    for header, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(header)
        if value is None:
            continue
        try:
            return float(value) / divisor
        except ValueError:
            continue
    return None


def _status_detail(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        return _one_line(_error_text(inner))
    if isinstance(body, str) and body.strip():
        return _one_line(body)
    return _one_line(exc.response.reason_phrase or "error")


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        for key in ("message", "detail", "error"):
            if isinstance(error.get(key), str):
                return str(error[key])
        return json.dumps(error)[:200]
    return str(error)


def _cause(exc: BaseException) -> str:
    cause = exc.__cause__ or exc.__context__
    while cause is not None and (cause.__cause__ or cause.__context__) is not None:
        cause = cause.__cause__ or cause.__context__
    text = str(cause) if cause is not None and str(cause) else str(exc)
    return _one_line(text, 120)


def _one_line(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
