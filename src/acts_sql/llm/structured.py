"""Structured calls: ask for JSON, extract and repair it, validate, re-ask.

:func:`ask_json` turns an LLM call into a typed value. Malformed output is
expected: the reply is extracted and repaired (:mod:`acts_sql.llm.jsonrepair`),
validated against a pydantic model and an optional callback, and on failure
the model is asked again, a bounded number of times, with the bad reply and a
precise statement of what was wrong. Bad output never raises: the result is a
:class:`StructuredReply` whose ``error`` says why no value was obtained.
Backend failures (:class:`~acts_sql.errors.LLMError`) do propagate: they are
infrastructure problems, not LLM output.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from acts_sql.llm.base import LLMBackend, LLMRequest, LLMResponse, Message, Usage
from acts_sql.llm.jsonrepair import JsonExtractionError, parse_json_object
from acts_sql.llm.prompting import load_template

__all__ = ["StructuredReply", "ask_json", "describe_validation_error", "reask_message"]

T = TypeVar("T", bound=BaseModel)

_MAX_LISTED_ERRORS = 8
_MAX_SHOWN_INPUT = 80


@dataclass
class StructuredReply(Generic[T]):
    """The outcome of :func:`ask_json`: a value, or the reason there is none."""

    value: T | None
    error: str | None
    attempts: int
    responses: list[LLMResponse] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.value is not None and self.error is None

    @property
    def usage(self) -> list[Usage]:
        """The usage of every call made, in order."""
        return [response.usage for response in self.responses]


def ask_json(
    backend: LLMBackend,
    request: LLMRequest,
    model_cls: type[T],
    *,
    validate: Callable[[T], str | None] | None = None,
    retries: int = 2,
) -> StructuredReply[T]:
    """Ask `backend` for a `model_cls` object; re-ask up to `retries` more times.

    `validate` checks a value that parsed; it returns an error message to feed
    back to the model, or None to accept. The request's `json_schema` defaults
    to `model_cls.model_json_schema()`. Raises only what the backend raises.
    """
    if retries < 0:
        raise ValueError(f"retries must be >= 0, got {retries}")
    if request.json_schema is None:
        request = request.model_copy(update={"json_schema": model_cls.model_json_schema()})
    messages = list(request.messages)
    responses: list[LLMResponse] = []
    problem = ""
    for attempt in range(1, retries + 2):
        response = backend.complete(request.model_copy(update={"messages": messages}))
        responses.append(response)
        value, problem = _read(response.text, model_cls, validate)
        if value is not None:
            return StructuredReply(value=value, error=None, attempts=attempt, responses=responses)
        messages = [
            *messages,
            Message(role="assistant", content=response.text),
            Message(role="user", content=reask_message(problem)),
        ]
    attempts = len(responses)
    plural = "s" if attempts != 1 else ""
    return StructuredReply(
        value=None,
        error=f"no usable reply after {attempts} attempt{plural}: {problem}",
        attempts=attempts,
        responses=responses,
    )


def reask_message(problem: str) -> str:
    """The user message that asks the model to correct its previous reply."""
    return load_template("acts_sql.llm", "prompts/json_reask.txt").render(problem=problem).strip()


def describe_validation_error(error: ValidationError) -> str:
    """A pydantic validation error as one line naming each field and fault."""
    items = error.errors(include_url=False)
    parts = [_describe_item(item) for item in items[:_MAX_LISTED_ERRORS]]
    if len(items) > _MAX_LISTED_ERRORS:
        parts.append(f"and {len(items) - _MAX_LISTED_ERRORS} more")
    return "; ".join(parts)


def _read(
    text: str, model_cls: type[T], validate: Callable[[T], str | None] | None
) -> tuple[T | None, str]:
    """The validated value, or None and the problem to report."""
    try:
        extraction = parse_json_object(text)
    except JsonExtractionError as exc:
        return None, f"it did not contain a usable JSON object ({exc.reason})."
    try:
        value = model_cls.model_validate(extraction.value)
    except ValidationError as exc:
        return None, (
            f"the JSON object does not match the required format: {describe_validation_error(exc)}."
        )
    if validate is not None:
        complaint = validate(value)
        if complaint:
            return None, complaint
    return value, ""


def _describe_item(item: Any) -> str:
    location = ".".join(str(part) for part in item.get("loc", ())) or "the object"
    if item.get("type") == "missing":
        return f"{location}: required field is missing"
    shown = repr(item.get("input"))
    if len(shown) > _MAX_SHOWN_INPUT:
        shown = shown[: _MAX_SHOWN_INPUT - 1] + "…"
    return f"{location}: {item.get('msg', 'invalid')} (got {shown})"
