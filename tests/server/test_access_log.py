"""The access log never shows a run's view key."""

from __future__ import annotations

import logging

import pytest

from acts_sql.server.access_log import REDACTED, RedactViewKeys, redact_view_keys


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/runs/abc?key=s3cr3t", f"/runs/abc?key={REDACTED}"),
        ("/v1/runs/abc/events?key=s3cr3t&x=1", f"/v1/runs/abc/events?key={REDACTED}&x=1"),
        ("/v1/runs/abc?x=1&key=a%2Fb", f"/v1/runs/abc?x=1&key={REDACTED}"),
        ("/v1/runs/abc?monkey=banana", "/v1/runs/abc?monkey=banana"),
        ("/runs/abc", "/runs/abc"),
    ],
)
def test_view_keys_are_redacted_and_nothing_else(path: str, expected: str) -> None:
    assert redact_view_keys(path) == expected


def test_the_filter_rewrites_uvicorns_access_record() -> None:
    record = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5000", "GET", "/runs/r1?key=s3cr3t", "1.1", 200),
        None,
    )
    assert RedactViewKeys().filter(record) is True
    message = record.getMessage()
    assert message == f'127.0.0.1:5000 - "GET /runs/r1?key={REDACTED} HTTP/1.1" 200'
