"""The service's access log, without the secrets that travel in URLs.

A run's view key is a query parameter (`?key=K`: a browser cannot send a
header with a page load or an EventSource), so uvicorn's access log would
write every key it serves. `RedactViewKeys` rewrites `key=...` in each
record's arguments before any handler formats it; `uvicorn_log_config()` is
uvicorn's own logging configuration with that filter on the access handler.
"""

from __future__ import annotations

import copy
import logging
import re
from typing import Any

REDACTED = "[redacted]"
_KEY_PARAM = re.compile(r"([?&]key=)[^&#\s\"]*")


def redact_view_keys(text: str) -> str:
    """`text` with the value of every `key=` query parameter replaced."""
    return _KEY_PARAM.sub(rf"\g<1>{REDACTED}", text)


class RedactViewKeys(logging.Filter):
    """A logging filter that hides view keys in a record's message and arguments."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact_view_keys(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(
                redact_view_keys(arg) if isinstance(arg, str) else arg for arg in record.args
            )
        return True


def uvicorn_log_config() -> dict[str, Any]:
    """uvicorn's default logging configuration, with `RedactViewKeys` on every handler."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config.setdefault("filters", {})["redact_view_keys"] = {"()": RedactViewKeys}
    for handler in config["handlers"].values():
        handler.setdefault("filters", []).append("redact_view_keys")
    return config
