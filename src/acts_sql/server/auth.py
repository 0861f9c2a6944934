"""Authentication: bearer tokens for clients, per-run view keys for the browser page.

Tokens are compared with `hmac.compare_digest` against every configured
token (no early exit), so the time taken does not tell how much of a guess
was right. A browser cannot send a bearer token with a page load or an
EventSource, so each run also has a random view key: it grants read access
to that one run (its page, result and events) and nothing else.
"""

from __future__ import annotations

import hmac
import re
import secrets
from collections.abc import Iterable
from enum import StrEnum

from acts_sql.server.errors import ApiError, ErrorCode

_BEARER = re.compile(r"^\s*bearer\s+(\S+)\s*$", re.IGNORECASE)
BEARER_CHALLENGE = 'Bearer realm="acts-sql"'


class Access(StrEnum):
    """What a request proved: a client token, or nothing yet (a view key may follow)."""

    TOKEN = "token"
    NONE = "none"


class TokenSet:
    """The accepted bearer tokens; `check` runs in time independent of the guess."""

    def __init__(self, tokens: Iterable[str]) -> None:
        self._tokens = [t.encode("utf-8") for t in dict.fromkeys(tokens)]
        if not self._tokens:
            raise ValueError("at least one token is required")

    def check(self, presented: str) -> bool:
        given = presented.encode("utf-8", "replace")
        found = False
        for token in self._tokens:
            found |= hmac.compare_digest(given, token)
        return found

    def authenticate(self, authorization: str | None) -> Access:
        """Access.TOKEN for a valid `Authorization: Bearer` header, Access.NONE without one.

        Raises ApiError(invalid_token) for a header that is present but wrong.
        """
        if authorization is None or not authorization.strip():
            return Access.NONE
        match = _BEARER.match(authorization)
        if match is None or not self.check(match.group(1)):
            raise ApiError(
                ErrorCode.INVALID_TOKEN,
                "the bearer token is not valid",
                headers={"WWW-Authenticate": f'{BEARER_CHALLENGE}, error="invalid_token"'},
            )
        return Access.TOKEN


def missing_token() -> ApiError:
    return ApiError(
        ErrorCode.UNAUTHORIZED,
        "authentication required: send 'Authorization: Bearer <token>'",
        headers={"WWW-Authenticate": BEARER_CHALLENGE},
    )


def new_view_key() -> str:
    return secrets.token_urlsafe(24)


def check_view_key(presented: str | None, expected: str) -> bool:
    if not presented:
        return False
    return hmac.compare_digest(presented.encode("utf-8", "replace"), expected.encode("utf-8"))
