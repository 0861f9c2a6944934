"""Fixtures for the everyday-errors benchmark: its databases, built once per session.

PostgreSQL cases need ACTS_SQL_TEST_PG_URL (a user that may create
databases); without it they skip, unless ACTS_SQL_REQUIRE_SERVICES=1 (CI).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from acts_sql.bench.everyday.cases import select_cases
from acts_sql.bench.everyday.databases import DatabaseKey, case_databases

PG_ENV = "ACTS_SQL_TEST_PG_URL"


def pg_url() -> str | None:
    url = os.environ.get(PG_ENV)
    if not url and os.environ.get("ACTS_SQL_REQUIRE_SERVICES") == "1":
        pytest.fail(f"{PG_ENV} is not set but ACTS_SQL_REQUIRE_SERVICES=1")
    return url


@pytest.fixture(scope="session")
def file_databases() -> Iterator[dict[DatabaseKey, str]]:
    """The SQLite and DuckDB databases of every case."""
    with case_databases(select_cases(dialects=["sqlite", "duckdb"]), None) as urls:
        yield urls


@pytest.fixture(scope="session")
def pg_databases() -> Iterator[dict[DatabaseKey, str]]:
    """The PostgreSQL databases of every case (skips without a server)."""
    url = pg_url()
    if not url:
        pytest.skip(f"{PG_ENV} is not set")
    with case_databases(select_cases(dialects=["postgresql"]), url) as urls:
        yield urls
