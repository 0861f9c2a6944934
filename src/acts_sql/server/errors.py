"""Typed API errors and the JSON they become: ``{"error": {"code", "message"}}``.

Codes are stable (clients branch on them); messages are for people. Every
error the service sends, from a route, a middleware or FastAPI's own
validation, goes through `error_response`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException


class ErrorCode(StrEnum):
    """Every error code the service sends, with its HTTP status in `STATUS`."""

    UNAUTHORIZED = "unauthorized"
    INVALID_TOKEN = "invalid_token"
    INVALID_KEY = "invalid_key"
    NOT_FOUND = "not_found"
    RUN_NOT_FOUND = "run_not_found"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    INVALID_JSON = "invalid_json"
    UNKNOWN_FIELD = "unknown_field"
    INVALID_REQUEST = "invalid_request"
    UNKNOWN_DATABASE = "unknown_database"
    DIALECT_MISMATCH = "dialect_mismatch"
    BUDGET_OVER_LIMIT = "budget_over_limit"
    BAD_INPUT = "bad_input"
    BODY_TOO_LARGE = "body_too_large"
    TOO_MANY_RUNS = "too_many_runs"
    NOT_WAITING = "not_waiting"
    UNKNOWN_READING = "unknown_reading"
    DATABASE_UNAVAILABLE = "database_unavailable"
    LLM_UNAVAILABLE = "llm_unavailable"
    RUN_TIMEOUT = "run_timeout"
    SHUTTING_DOWN = "shutting_down"
    INTERNAL_ERROR = "internal_error"


STATUS: dict[ErrorCode, int] = {
    ErrorCode.UNAUTHORIZED: 401,
    ErrorCode.INVALID_TOKEN: 401,
    ErrorCode.INVALID_KEY: 401,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.RUN_NOT_FOUND: 404,
    ErrorCode.METHOD_NOT_ALLOWED: 405,
    ErrorCode.INVALID_JSON: 422,
    ErrorCode.UNKNOWN_FIELD: 422,
    ErrorCode.INVALID_REQUEST: 422,
    ErrorCode.UNKNOWN_DATABASE: 400,
    ErrorCode.DIALECT_MISMATCH: 400,
    ErrorCode.BUDGET_OVER_LIMIT: 400,
    ErrorCode.BAD_INPUT: 400,
    ErrorCode.BODY_TOO_LARGE: 413,
    ErrorCode.TOO_MANY_RUNS: 429,
    ErrorCode.NOT_WAITING: 409,
    ErrorCode.UNKNOWN_READING: 422,
    ErrorCode.DATABASE_UNAVAILABLE: 503,
    ErrorCode.LLM_UNAVAILABLE: 503,
    ErrorCode.RUN_TIMEOUT: 504,
    ErrorCode.SHUTTING_DOWN: 503,
    ErrorCode.INTERNAL_ERROR: 500,
}


class ErrorBody(BaseModel):
    code: ErrorCode
    message: str


class ErrorEnvelope(BaseModel):
    """The body of every error response."""

    error: ErrorBody


class ApiError(Exception):
    """An error a route raises on purpose; becomes `ErrorEnvelope` with its status."""

    def __init__(
        self, code: ErrorCode, message: str, *, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.headers = headers or {}

    @property
    def status(self) -> int:
        return STATUS[self.code]

    def body(self) -> ErrorBody:
        return ErrorBody(code=self.code, message=self.message)


def error_response(
    code: ErrorCode, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    envelope = ErrorEnvelope(error=ErrorBody(code=code, message=message))
    return JSONResponse(
        envelope.model_dump(mode="json"),
        status_code=STATUS[code],
        headers={"Cache-Control": "no-store", **(headers or {})},
    )


def _validation_error(exc: RequestValidationError) -> tuple[ErrorCode, str]:
    errors = list(exc.errors())
    if not errors:
        return ErrorCode.INVALID_REQUEST, "invalid request"
    first: dict[str, Any] = errors[0]
    loc = [str(p) for p in first.get("loc", ()) if p != "body"]
    where = ".".join(loc) or "body"
    kind = first.get("type", "")
    if kind == "json_invalid":
        return ErrorCode.INVALID_JSON, "the request body is not valid JSON"
    if kind == "extra_forbidden":
        return (
            ErrorCode.UNKNOWN_FIELD,
            f"unknown field {where!r}: the request names a configured database, never a URL, "
            "path or backend",
        )
    if kind == "missing" and where == "body":
        return ErrorCode.INVALID_REQUEST, "a JSON object body is required"
    return ErrorCode.INVALID_REQUEST, f"{where}: {first.get('msg', 'invalid')}"


def install_error_handlers(app: FastAPI) -> None:
    """Route every error through `error_response`."""

    async def on_api_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ApiError)
        return error_response(exc.code, exc.message, exc.headers)

    async def on_validation(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        code, message = _validation_error(exc)
        return error_response(code, message)

    async def on_http(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        if exc.status_code == 405:
            return error_response(ErrorCode.METHOD_NOT_ALLOWED, "method not allowed")
        if exc.status_code == 413:
            return error_response(
                ErrorCode.BODY_TOO_LARGE, str(exc.detail), {"Connection": "close"}
            )
        if exc.status_code == 404:
            return error_response(ErrorCode.NOT_FOUND, "no such endpoint")
        return error_response(ErrorCode.INVALID_REQUEST, str(exc.detail))

    async def on_unexpected(_: Request, exc: Exception) -> JSONResponse:
        return error_response(ErrorCode.INTERNAL_ERROR, f"internal error ({type(exc).__name__})")

    app.add_exception_handler(ApiError, on_api_error)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(StarletteHTTPException, on_http)
    app.add_exception_handler(Exception, on_unexpected)
