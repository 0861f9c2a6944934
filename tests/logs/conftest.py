"""Fixtures for the log benchmark: the small generated database, built once per session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from acts_sql.bench.logs.generator import LogDatabase, LogSize, generate
from acts_sql.db.connect import open_database
from acts_sql.db.executor import Executor
from acts_sql.db.language import with_language


@pytest.fixture(scope="session")
def small_logs(tmp_path_factory: pytest.TempPathFactory) -> LogDatabase:
    return generate(tmp_path_factory.mktemp("logs") / "logs-small-16.duckdb", LogSize.SMALL)


@pytest.fixture
def prql_logs(small_logs: LogDatabase) -> Iterator[Executor]:
    executor = with_language(open_database(f"duckdb:///{small_logs.path}"), "prql")
    yield executor
    executor.close()
