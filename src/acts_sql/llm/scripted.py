"""Scripted backend: replays canned responses per purpose, for tests and demos.

The script is a JSON object mapping each request purpose to the list of
response texts to return, in order::

    {"plan": ["{...}"], "judge": ["{...}", "{...}"]}

Each call of a purpose takes that purpose's next response; a purpose with no
response left raises :class:`ScriptExhaustedError` naming it. A request's
``enough_blocks`` cuts the response after that many ```sql blocks, as the local
backend stops writing there. Token counts are an *estimate* (about four
characters per token), since no model is involved; seconds are measured, and
include the optional simulated latency ``delay_s``.

The backend is `OrderedReplies`: a request sent ahead (``--parallel``) waits
out ``delay_s`` at once, but takes its reply only when the search uses it, so
the replies go out in the same order as in a sequential run.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from acts_sql.errors import LLMSpecError, ScriptExhaustedError
from acts_sql.llm.base import LLMRequest, LLMResponse, Usage
from acts_sql.llm.sql_fences import through_blocks

__all__ = ["ScriptedBackend", "estimate_tokens"]


def estimate_tokens(text: str) -> int:
    """A rough token count: one token per four characters, rounded up."""
    return _estimate_chars(len(text))


def _estimate_chars(chars: int) -> int:
    return (chars + 3) // 4


class ScriptedBackend:
    """An LLMBackend whose answers come from a script, one list per purpose."""

    def __init__(
        self,
        script: Mapping[str, Sequence[str]],
        *,
        delay_s: float = 0.0,
        source: str = "<dict>",
    ) -> None:
        self._source = source
        self._script = _validated(script, source)
        if delay_s < 0:
            raise LLMSpecError(
                f"scripted backend {source}: delay_s must be >= 0, got {delay_s}",
                source=source,
            )
        self.delay_s = float(delay_s)
        self._used = dict.fromkeys(self._script, 0)
        self._lock = threading.Lock()
        self.name = "scripted" if source == "<dict>" else f"scripted:{source}"

    @classmethod
    def from_file(cls, path: str | Path, *, delay_s: float = 0.0) -> ScriptedBackend:
        """Load a script file; a missing or malformed file raises LLMSpecError."""
        shown = str(path)
        try:
            text = Path(path).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise LLMSpecError(f"scripted LLM file {shown}: file not found", path=shown) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise LLMSpecError(
                f"scripted LLM file {shown}: cannot be read ({type(exc).__name__}: {exc})",
                path=shown,
            ) from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise LLMSpecError(
                f"scripted LLM file {shown}: not valid JSON "
                f"(line {exc.lineno}, column {exc.colno}: {exc.msg})",
                path=shown,
                line=exc.lineno,
                column=exc.colno,
            ) from None
        return cls(data, delay_s=delay_s, source=shown)

    def restarted(self) -> ScriptedBackend:
        """The same script from its first reply (a batch replays it for every task, so
        that a task's replies do not depend on which worker ran it, or after what)."""
        return ScriptedBackend(self._script, delay_s=self.delay_s, source=self._source)

    def complete(self, request: LLMRequest) -> LLMResponse:
        started = time.perf_counter()
        text = self._next_text(request.purpose)
        if self.delay_s:
            time.sleep(self.delay_s)
        return self._response(request, text, time.perf_counter() - started)

    def simulate_latency(self, request: LLMRequest) -> None:
        """The simulated latency of one call, without taking a reply (`OrderedReplies`)."""
        if self.delay_s:
            time.sleep(self.delay_s)

    def reply(self, request: LLMRequest, *, seconds: float) -> LLMResponse:
        """The purpose's next reply, at once; `seconds`: the latency already waited out."""
        return self._response(request, self._next_text(request.purpose), seconds)

    def _next_text(self, purpose: str) -> str:
        with self._lock:
            responses = self._script.get(purpose, [])
            used = self._used.get(purpose, 0)
            if used >= len(responses):
                raise ScriptExhaustedError(
                    self._exhausted_message(purpose, used),
                    purpose=purpose,
                    used=used,
                    source=self._source,
                )
            self._used[purpose] = used + 1
            return responses[used]

    def _response(self, request: LLMRequest, text: str, seconds: float) -> LLMResponse:
        text = through_blocks(text, request.enough_blocks)
        prompt_chars = sum(len(message.content) for message in request.messages)
        usage = Usage(
            purpose=request.purpose,
            prompt_tokens=_estimate_chars(prompt_chars),
            completion_tokens=estimate_tokens(text),
            seconds=seconds,
        )
        return LLMResponse(text=text, usage=usage)

    def remaining(self) -> dict[str, int]:
        """How many responses are left, per purpose named in the script."""
        with self._lock:
            return {
                purpose: len(items) - self._used[purpose] for purpose, items in self._script.items()
            }

    def used(self) -> dict[str, int]:
        """How many responses have been taken, per purpose named in the script."""
        with self._lock:
            return dict(self._used)

    def _exhausted_message(self, purpose: str, used: int) -> str:
        where = "" if self._source == "<dict>" else f" ({self._source})"
        if purpose not in self._script:
            known = ", ".join(self._script) or "none"
            return (
                f"scripted LLM{where} has no responses for purpose {purpose!r} "
                f"(purposes in the script: {known})"
            )
        return f"scripted LLM{where} ran out of responses for purpose {purpose!r}: all {used} used"


def _validated(script: Any, source: str) -> dict[str, list[str]]:
    prefix = f"scripted LLM file {source}" if source != "<dict>" else "scripted LLM script"
    if not isinstance(script, Mapping):
        raise LLMSpecError(
            f"{prefix}: expected a JSON object mapping purposes to lists of response strings, "
            f"got {_kind(script)}",
            path=source,
        )
    result: dict[str, list[str]] = {}
    for purpose, responses in script.items():
        if not isinstance(purpose, str) or not purpose:
            raise LLMSpecError(f"{prefix}: purposes must be non-empty strings", path=source)
        if isinstance(responses, str) or not isinstance(responses, Sequence):
            raise LLMSpecError(
                f"{prefix}: purpose {purpose!r} must map to a list of strings, "
                f"got {_kind(responses)}",
                path=source,
                purpose=purpose,
            )
        for index, item in enumerate(responses):
            if not isinstance(item, str):
                raise LLMSpecError(
                    f"{prefix}: purpose {purpose!r}, response {index + 1} must be a string "
                    f"(JSON responses are written as strings), got {_kind(item)}",
                    path=source,
                    purpose=purpose,
                    index=index,
                )
        result[purpose] = list(responses)
    return result


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, Sequence):
        return "a list"
    return type(value).__name__
