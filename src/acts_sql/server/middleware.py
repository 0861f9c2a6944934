"""ASGI middleware: authentication first, then the request size limit.

Both answer with the service's JSON errors before any route runs. Auth covers
every path except the public ones (health and the OpenAPI document); a GET
of a run's page, result or events may instead carry the run's view key
(``?key=``), which the route checks against that run.
"""

from __future__ import annotations

import re
from typing import Any

from starlette.datastructures import Headers, QueryParams
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from acts_sql.server.auth import Access, TokenSet, missing_token
from acts_sql.server.errors import ApiError, ErrorCode, error_response

PUBLIC_PATHS = frozenset({"/healthz", "/openapi.json"})
_KEY_READABLE = re.compile(r"^(/v1/runs/[^/]+(/events)?|/runs/[^/]+)/?$")
_KEY_CHOOSABLE = re.compile(r"^/v1/runs/[^/]+/choice/?$")
ACCESS_KEY = "acts_sql_access"
"""Where the middleware leaves the request's `Access` in the scope's state."""


def request_access(scope: Scope) -> Access:
    state: dict[str, Any] = scope.get("state") or {}
    access = state.get(ACCESS_KEY, Access.NONE)
    return access if isinstance(access, Access) else Access.NONE


class AuthMiddleware:
    """Rejects requests without a valid bearer token (or, for run reads, a view key)."""

    def __init__(self, app: ASGIApp, tokens: TokenSet) -> None:
        self.app = app
        self.tokens = tokens

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in PUBLIC_PATHS:
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        try:
            access = self.tokens.authenticate(headers.get("authorization"))
        except ApiError as exc:
            await error_response(exc.code, exc.message, exc.headers)(scope, receive, send)
            return
        if access is Access.NONE and not self._may_use_key(scope):
            missing = missing_token()
            await error_response(missing.code, missing.message, missing.headers)(
                scope, receive, send
            )
            return
        scope.setdefault("state", {})[ACCESS_KEY] = access
        await self.app(scope, receive, send)

    @staticmethod
    def _may_use_key(scope: Scope) -> bool:
        """A view key opens a run's reads, and its choice (the viewer's reading buttons:
        whoever holds the page may answer the question it shows)."""
        if scope["method"] in ("GET", "HEAD"):
            allowed = _KEY_READABLE.match(scope["path"])
        else:
            allowed = scope["method"] == "POST" and _KEY_CHOOSABLE.match(scope["path"])
        if not allowed:
            return False
        return "key" in QueryParams(scope.get("query_string", b"").decode("latin-1"))


class BodyTooLarge(StarletteHTTPException):
    """Raised while reading a body past the limit; the error handlers answer 413."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"the request body is larger than {limit} bytes")


class BodyLimitMiddleware:
    """413 for bodies over `max_bytes`: by Content-Length at once, or while streaming."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        if declared is not None:
            try:
                too_big = int(declared) > self.max_bytes
            except ValueError:
                too_big = False
            if too_big:
                await self._reject(scope, receive, send)
                return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise BodyTooLarge(self.max_bytes)
            return message

        await self.app(scope, limited, send)

    async def _reject(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = error_response(
            ErrorCode.BODY_TOO_LARGE,
            f"the request body is larger than {self.max_bytes} bytes",
            {"Connection": "close"},
        )
        await response(scope, receive, send)
