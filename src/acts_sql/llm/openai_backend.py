"""Backend for any OpenAI-compatible chat completions endpoint (openai SDK).

Works with OpenAI, vLLM, Ollama, llama.cpp's ``llama-server``,
llama-cpp-python's server, LM Studio, LiteLLM, DeepSeek and the like
(docs/LLM_SERVERS.md says what each gets).

- Endpoint and key default to ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``. A
  local server that needs no key gets a placeholder key; the official API
  without a key is a configuration error.
- ``timeout`` bounds a whole :meth:`OpenAIBackend.complete` call, retries
  included: each attempt may use only the time left (as the HTTP timeout), a
  retry is made only if its back-off fits in what is left, so a timed-out
  attempt is not retried. Not given, it is ``ACTS_SQL_LLM_TIMEOUT`` or a
  default that is longer for a loopback endpoint
  (:mod:`acts_sql.llm.endpoint_limits`). A request's ``timeout_s`` (what is
  left of the run) lowers that bound for its call; running out of it raises
  :class:`~acts_sql.errors.LLMDeadlineError`.
- The SDK's own retries, up to ``max_retries``, with its exponential back-off
  scaled to ``backoff_s`` (or the server's ``Retry-After``), on what the SDK
  retries: 408, 409, 429, 5xx and connection failures; except a reply that
  refuses a field of the request (its body names ``response_format``,
  ``json_schema``, ``json_object`` or ``seed``): the same request would get
  the same answer. Any final failure raises :class:`~acts_sql.errors.LLMError`
  with a one-line message naming the endpoint, the HTTP status and the
  server's message, and what earlier attempts got (a timeout after a refused
  attempt says so, not just "no reply"): an
  :class:`~acts_sql.errors.LLMUnavailableError` when the endpoint cannot be
  used at all (no connection after the retries; HTTP 401, 403 or 404).
- A request with ``json_schema`` asks for JSON output with ``response_format``
  ``json_schema``. A reply whose status is 4xx/5xx and whose body names
  ``response_format``, ``json_schema`` or ``json_object`` is a refusal of that
  mode (llama-cpp-python's server answers ``json_schema`` with HTTP 500): the
  request is sent again with ``json_object``, then with no
  ``response_format``, and the refused modes are never tried again by this
  backend. A bare HTTP 400/422 also moves to the next mode, but only a mode
  that then works is remembered. Replies that ignore the mode (prose around
  the JSON, a fenced code block) are the reader's business
  (:mod:`acts_sql.llm.jsonrepair`).
- A server that refuses ``seed`` (a 4xx/5xx naming it) is asked again without
  it, and this backend sends no seed from then on.
- Usage per call: prompt, completion and cached prompt tokens, the latter
  from ``usage.prompt_tokens_details.cached_tokens`` (OpenAI, vLLM),
  ``usage.prompt_cache_hit_tokens`` (DeepSeek), ``timings.cache_n``
  (llama.cpp's ``llama-server``) or ``tokens_cached``, whichever is reported.
- A leading ``<think>...</think>`` block (reasoning models served locally) is
  removed from the reply text.
"""

from __future__ import annotations

import functools
import json
import os
import re
import sys
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from acts_sql.errors import LLMDeadlineError, LLMError, LLMSpecError, LLMUnavailableError
from acts_sql.llm.base import LLMRequest, LLMResponse, Usage
from acts_sql.llm.endpoint_limits import TIMEOUT_ENV, resolve_timeout

if TYPE_CHECKING:
    import openai
    from openai.types.chat import ChatCompletion

__all__ = ["JsonMode", "OpenAIBackend"]

JsonMode = Literal["json_schema", "json_object", "none"]
_JSON_MODES: tuple[JsonMode, ...] = ("json_schema", "json_object", "none")
_FORMAT_REJECTED_STATUSES = frozenset({400, 422})
"""Statuses that move to the next JSON mode even when the body names no field."""
_FORMAT_WORDS = ("response_format", "json_schema", "json_object")
_SEED_WORDS = ("seed",)
_UNUSABLE_STATUSES = frozenset({401, 403, 404})
"""Statuses that every request of this configuration would get: the endpoint is unusable."""
_SDK_BACKOFF_S = 0.5  # the SDK's first back-off (openai._constants.INITIAL_RETRY_DELAY)
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
        timeout: float | None = None,
        max_retries: int = 2,
        *,
        backoff_s: float = 0.5,
    ) -> None:
        import openai  # imported here: the SDK is slow to import and only needed now

        if not model or not model.strip():
            raise LLMSpecError("openai backend: a model name is required (openai:MODEL)")
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
        self.timeout = resolve_timeout(timeout, base_url)
        self.max_retries = max_retries
        self.backoff_s = float(backoff_s)
        self.name = f"openai:{self.model}"
        self._openai = openai
        self._client = _client_class(openai)(
            api_key=api_key,
            base_url=base_url,
            timeout=self.timeout,
            max_retries=max_retries,
            backoff_s=self.backoff_s,
        )
        self.endpoint = str(self._client.base_url).rstrip("/")
        self._json_mode_index = 0
        self._send_seed = True
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
            reply, attempts = self._post(request, None, deadline)
        else:
            reply, attempts = self._post_json(request, deadline)
        text, usage = self._parse(reply, request, attempts)
        usage.seconds = time.monotonic() - started
        return LLMResponse(text=text, usage=usage)

    # -- JSON mode negotiation -------------------------------------------------------

    def _post_json(self, request: LLMRequest, deadline: _Deadline) -> tuple[ChatCompletion, int]:
        first = self._json_mode_index
        refused: list[str] = []
        for index in range(first, len(_JSON_MODES)):
            mode = _JSON_MODES[index]
            try:
                reply = self._post(request, mode, deadline)
            except LLMError as exc:
                named = _refuses(exc, _FORMAT_WORDS)
                bare = exc.details.get("status") in _FORMAT_REJECTED_STATUSES
                if (named or bare) and index + 1 < len(_JSON_MODES):
                    refused.append(f"response_format {mode}: {exc.details.get('failure')}")
                    if named:  # a refusal of the mode itself: never ask for it again
                        self._remember_mode(index + 1)
                    continue
                raise _after_refusals(exc, refused) from None
            self._remember_mode(index)
            return reply
        raise AssertionError("unreachable: the last JSON mode re-raises")  # pragma: no cover

    def _remember_mode(self, index: int) -> None:
        with self._lock:
            self._json_mode_index = max(self._json_mode_index, index)

    # -- one request, with the SDK's retries ----------------------------------------

    def _post(
        self, request: LLMRequest, mode: JsonMode | None, deadline: _Deadline
    ) -> tuple[ChatCompletion, int]:
        """The typed reply and the attempts it took; sent again without a refused seed."""
        try:
            return self._post_once(request, mode, deadline)
        except LLMError as exc:
            seed_refused = _refuses(exc, _SEED_WORDS) and not _refuses(exc, _FORMAT_WORDS)
            if request.seed is None or not self._send_seed or not seed_refused:
                raise
            self._send_seed = False
        return self._post_once(request, mode, deadline)

    def _post_once(
        self, request: LLMRequest, mode: JsonMode | None, deadline: _Deadline
    ) -> tuple[ChatCompletion, int]:
        """The typed reply and the number of attempts it took (the SDK retries)."""
        openai = self._openai
        self._client.deadline.at = deadline.at
        self._client.deadline.refused = None
        try:
            raw = self._client.chat.completions.with_raw_response.create(
                **self._arguments(request, mode), timeout=deadline.at - time.monotonic()
            )
        except openai.APITimeoutError as exc:
            earlier = getattr(self._client.deadline, "refused", None)
            raise self._timed_out(request, deadline, _attempts(exc), earlier) from None
        except openai.APIConnectionError as exc:
            failure = f"cannot connect ({_cause(exc)})"
            raise self._error(
                failure, request, _attempts(exc), status=None, unusable=True
            ) from None
        except openai.APIStatusError as exc:
            status = exc.status_code
            failure = f"HTTP {status}: {_status_detail(exc)}"
            if status in _HINTS:
                failure += f" ({_HINTS[status]})"
            raise self._error(failure, request, _attempts(exc), status=status) from None
        except openai.OpenAIError as exc:  # anything else the SDK reports
            failure = f"request failed ({type(exc).__name__}: {_one_line(str(exc), 160)})"
            raise self._error(failure, request, 1, status=None) from None
        attempts = raw.retries_taken + 1
        self._check_body(raw.text, request, attempts, raw.status_code)
        return raw.parse(), attempts

    def _arguments(self, request: LLMRequest, mode: JsonMode | None) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": message.role, "content": message.content} for message in request.messages
            ],
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
        }
        if request.seed is not None and self._send_seed:
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

    # -- response ----------------------------------------------------------------------

    def _check_body(self, text: str, request: LLMRequest, attempt: int, status: int) -> None:
        """Raise for a body that is not a JSON object, or an error object sent with 200."""
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

    def _parse(
        self, reply: ChatCompletion, request: LLMRequest, attempts: int
    ) -> tuple[str, Usage]:
        from openai.types.chat import ChatCompletionMessage

        # the SDK builds its types without validating: a field may hold anything
        choices: Any = reply.choices
        choice = choices[0] if isinstance(choices, list) and choices else None
        message = getattr(choice, "message", None)
        if not isinstance(message, ChatCompletionMessage):
            raise self._error(
                "malformed response: no choices[0].message", request, attempts, status=200
            )
        content = message.content if isinstance(message.content, str) else message.refusal
        if not isinstance(content, str):
            raise self._error(
                "malformed response: the message has no text content", request, attempts, status=200
            )
        usage = _usage(reply, request.purpose)
        finish = getattr(choice, "finish_reason", None)
        if isinstance(finish, str) and finish:
            usage.stopped_by = finish
        return _THINK.sub("", content, count=1), usage

    # -- errors -------------------------------------------------------------------------

    def _where(self) -> str:
        return f"LLM endpoint {self.endpoint} (model {self.model}):"

    def _timed_out(
        self, request: LLMRequest, deadline: _Deadline, attempts: int, earlier: str | None = None
    ) -> LLMError:
        """No reply in time: an LLMDeadlineError when the request's own deadline was the limit.

        `earlier`: what a previous attempt of this request got (``HTTP 500: ...``), if any,
        so that the message does not say "no reply" when a reply came."""
        got = f"{earlier}, then no reply to the retry" if earlier else "no reply"
        if not deadline.by_request:
            hint = "" if earlier else f" (a slower server: --llm-timeout S or {TIMEOUT_ENV})"
            return self._error(
                f"{got} within {deadline.seconds:g} s{hint}", request, attempts, status=None
            )
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        return LLMDeadlineError(
            f"wall time: {self._where()} {got} to the {request.purpose} request within "
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
            failure=failure,
        )


def _refuses(exc: LLMError, words: tuple[str, ...]) -> bool:
    """Is `exc` a 4xx/5xx (not 401/403/404) whose server message names one of `words`?"""
    status = exc.details.get("status")
    if not isinstance(status, int) or status < 400 or status in _UNUSABLE_STATUSES:
        return False
    return _names_any(str(exc.details.get("failure", "")), words)


def _names_any(text: str, words: tuple[str, ...]) -> bool:
    lowered = text.lower()
    return any(word in lowered for word in words)


def _after_refusals(exc: LLMError, refused: list[str]) -> LLMError:
    """`exc`, its message also saying which JSON modes were refused before it."""
    if not refused:
        return exc
    return type(exc)(f"{exc.message}; before that: {'; '.join(refused)}", **exc.details)


def _usage(reply: Any, purpose: str) -> Usage:
    """The usage a reply reports; cached prompt tokens from whichever field the server fills."""
    from openai.types import CompletionUsage

    raw = reply.usage
    if not isinstance(raw, CompletionUsage):
        return Usage(purpose=purpose, cached_prompt_tokens=_int(_llama_cpp_cached(reply)))
    cached = getattr(raw.prompt_tokens_details, "cached_tokens", None)
    if cached is None:
        cached = getattr(raw, "prompt_cache_hit_tokens", None)  # DeepSeek
    if cached is None:
        cached = _llama_cpp_cached(reply)
    return Usage(
        purpose=purpose,
        prompt_tokens=_int(raw.prompt_tokens),
        completion_tokens=_int(raw.completion_tokens),
        cached_prompt_tokens=_int(cached),
    )


def _llama_cpp_cached(reply: Any) -> Any:
    """llama.cpp's count of prompt tokens reused from its cache: ``timings.cache_n`` of
    ``llama-server``, or a top-level ``tokens_cached``; None when neither is there."""
    timings = getattr(reply, "timings", None)
    if isinstance(timings, dict) and "cache_n" in timings:
        return timings["cache_n"]
    return getattr(reply, "tokens_cached", None)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _schema_name(schema: dict[str, Any], purpose: str) -> str:
    title = schema.get("title")
    raw = title if isinstance(title, str) and title else purpose
    return re.sub(r"[^A-Za-z0-9_-]", "_", raw)[:64] or "reply"


def _attempts(exc: openai.APIError) -> int:
    """How many attempts the SDK made, from the retry count it sends with each request."""
    try:
        return int(exc.request.headers.get("x-stainless-retry-count", 0)) + 1
    except (ValueError, RuntimeError):
        return 1


@functools.cache
def _client_class(openai: Any) -> Any:
    """The SDK's client, its retries bound by the deadline of the call in this thread."""

    class Client(openai.OpenAI):  # type: ignore[name-defined,misc]
        def __init__(self, *, backoff_s: float, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.backoff_s = backoff_s
            self.deadline = threading.local()  # .at: when the call in this thread must be over

        def _prepare_options(self, options: Any) -> Any:
            options = super()._prepare_options(options)
            options.timeout = max(self.deadline.at - time.monotonic(), 0.001)  # what is left
            return options

        def _should_retry(self, response: Any) -> bool:
            """Not when the reply refuses a field of the request: a retry gets the same."""
            if response.status_code >= 400 and _names_any(_body_text(response), _REFUSED_FIELDS):
                return False
            return bool(super()._should_retry(response))

        def _calculate_retry_timeout(
            self, remaining: int, options: Any, headers: Any = None
        ) -> float:
            delay = float(super()._calculate_retry_timeout(remaining, options, headers))
            if self._parse_retry_after_header(headers) is None:  # the back-off, not the server's
                delay *= self.backoff_s / _SDK_BACKOFF_S
            return delay

        def _sleep_for_retry(
            self, *, retries_taken: int, max_retries: int, options: Any, response: Any
        ) -> None:
            remaining = max_retries - retries_taken
            if response is not None:  # what this attempt got, for a later timeout's message
                self.deadline.refused = _describe_status(self, response)
            delay = self._calculate_retry_timeout(
                remaining, options, response.headers if response else None
            )
            if time.monotonic() + delay < self.deadline.at:
                time.sleep(delay)
            elif response is not None:
                raise self._make_status_error_from_response(response) from None
            else:  # a timeout or a connection failure (the exception being handled)
                raise _sdk_error(openai)

    return Client


def _sdk_error(openai: Any) -> Exception:
    """What the SDK raises for the transport failure being handled, when it retries no more."""
    from openai._httpx2 import timeout_exceptions

    error = sys.exc_info()[1]
    timed_out = isinstance(error, timeout_exceptions())
    kind = openai.APITimeoutError if timed_out else openai.APIConnectionError
    return kind(request=getattr(error, "request", None))  # type: ignore[no-any-return]


_REFUSED_FIELDS = _FORMAT_WORDS + _SEED_WORDS


def _body_text(response: Any) -> str:
    try:
        return str(response.text)
    except Exception:  # a body that cannot be read names nothing
        return ""


def _describe_status(client: Any, response: Any) -> str | None:
    """``HTTP 500: <the server's message>`` for an error reply the SDK is about to retry."""
    try:
        error = client._make_status_error_from_response(response)
        return f"HTTP {response.status_code}: {_status_detail(error)}"
    except Exception:
        return f"HTTP {getattr(response, 'status_code', '?')}"


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
