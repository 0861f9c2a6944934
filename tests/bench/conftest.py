"""Fixtures for the BIRD-CRITIC harness tests: synthetic tasks, servers, the dev split.

Synthetic tasks are made here (own tables, own test cases); nothing is copied
from the benchmark. The development split is read from the shared data
directory at run time, and its tests skip when it is absent.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from acts_sql.bench.models import EvalMode, ScoredTask, Solution, Task
from acts_sql.bench.scorer import EvalOptions, Evaluator
from acts_sql.bench.servers import ServerURLs

REPO = Path(__file__).resolve().parents[2]
DATA_DIR = Path(os.environ.get("ACTS_SQL_BIRD_CRITIC_DIR", REPO.parent / "shared/data/bird-critic"))

EX_BASE_TEST = """
def test_case(pred_sqls, sol_sqls, db_name, conn):
    pred_sqls = remove_distinct(pred_sqls)
    sol_sqls = remove_distinct(sol_sqls)
    result = ex_base(pred_sqls, sol_sqls, db_name, conn)
    assert result == 1, f"ex_base returned {result} but expected 1."
"""
"""The usual PostgreSQL/MySQL test: same set of rows as the solution (DISTINCT removed)."""

SQLITE_EX_BASE_TEST = """
def test_case(pred_sqls, sol_sqls, db_path, conn, conditions):
    result = ex_base(pred_sqls, sol_sqls, db_path, conn, conditions)
    assert result == 1, f"ex_base returned {result} but expected 1."
"""


def make_task(
    *,
    dialect: str = "SQLite",
    preprocess: list[str] | None = None,
    issue: list[str] | None = None,
    sol: list[str] | None = None,
    tests: list[str] | None = None,
    clean_up: list[str] | None = None,
    efficiency: bool = False,
    category: str = "Query",
    conditions: dict[str, Any] | None = None,
    instance_id: str = "T_1",
    set_name: str = "synthetic",
) -> ScoredTask:
    """A synthetic task with its solution and tests."""
    task = Task(
        set=set_name,
        instance_id=instance_id,
        dialect=dialect,
        db_id="shop",
        query="synthetic task",
        issue_sql=issue or [],
        preprocess_sql=preprocess or [],
        clean_up_sql=clean_up or [],
        category=category,
        efficiency=efficiency,
    )
    solution = Solution(
        set=set_name,
        instance_id=instance_id,
        sol_sql=sol or [],
        test_cases=tests if tests is not None else [],
        conditions=conditions or {},
    )
    return ScoredTask(task=task, solution=solution)


@pytest.fixture(scope="session")
def sqlite_evaluator() -> Iterator[Evaluator]:
    with Evaluator(EvalOptions(mode=EvalMode.PRED, test_timeout_s=5, task_timeout_s=30)) as ev:
        yield ev


def _server_url(name: str) -> str | None:
    return os.environ.get(name) or None


@pytest.fixture(scope="session")
def pg_url() -> str:
    url = _server_url("ACTS_SQL_TEST_PG_URL")
    if not url:
        pytest.skip("ACTS_SQL_TEST_PG_URL is not set (scripts/test.sh starts a PostgreSQL)")
    return url


@pytest.fixture(scope="session")
def mysql_url() -> str:
    url = _server_url("ACTS_SQL_TEST_MYSQL_URL")
    if not url:
        pytest.skip("ACTS_SQL_TEST_MYSQL_URL is not set (scripts/test.sh starts a MariaDB)")
    return url


@pytest.fixture(scope="session")
def pg_has_postgis(pg_url: str) -> bool:
    """Whether the test PostgreSQL can create the PostGIS extension."""
    import psycopg2

    from acts_sql.bench.servers import postgres_connect_kwargs

    conn = psycopg2.connect(**postgres_connect_kwargs(pg_url))
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT count(*) FROM pg_available_extensions WHERE name = 'postgis'")
            return bool(cur.fetchone()[0])
    finally:
        conn.close()


@pytest.fixture(scope="session")
def server_evaluator(pg_url: str) -> Iterator[Evaluator]:
    servers = ServerURLs(postgresql=pg_url, mysql=_server_url("ACTS_SQL_TEST_MYSQL_URL"))
    with Evaluator(EvalOptions(servers=servers, test_timeout_s=20, task_timeout_s=60)) as ev:
        yield ev


@pytest.fixture(scope="session")
def mysql_evaluator(mysql_url: str) -> Iterator[Evaluator]:
    with Evaluator(
        EvalOptions(servers=ServerURLs(mysql=mysql_url), test_timeout_s=20, task_timeout_s=60)
    ) as ev:
        yield ev


@pytest.fixture
def task() -> Callable[..., ScoredTask]:
    """The synthetic-task maker (see `make_task`)."""
    return make_task


@pytest.fixture
def tests_sources() -> dict[str, str]:
    """Common test-case sources: "ex_base" (PostgreSQL/MySQL), "sqlite_ex_base"."""
    return {"ex_base": EX_BASE_TEST, "sqlite_ex_base": SQLITE_EX_BASE_TEST}


@pytest.fixture(scope="session")
def bird_critic_dir() -> Path:
    if not (DATA_DIR / "dev" / "ids.tsv").exists():
        pytest.skip(f"BIRD-CRITIC data not found in {DATA_DIR} (set ACTS_SQL_BIRD_CRITIC_DIR)")
    return DATA_DIR
