"""The suite's split between pytest-xdist workers (`worker_groups.worker_group`): a test file that
reaches the shared database servers or the Ray cluster never runs beside another such file."""

from __future__ import annotations

import re
from pathlib import Path

from worker_groups import RAY_TESTS, TESTS_ROOT, node_group, worker_group

SERVER_USE = re.compile(
    r"ACTS_SQL_TEST_(PG|MYSQL)_URL|\b(pg_url|mysql_url|pg_has_postgis)\b|^from live import",
    re.MULTILINE,
)
"""What a test file that uses the shared PostgreSQL or MariaDB servers says."""


def files() -> list[Path]:
    """The test files, this one aside (it names what it looks for)."""
    mine = Path(__file__).resolve()
    return sorted(p for p in TESTS_ROOT.rglob("test_*.py") if p.resolve() != mine)


def test_every_file_that_uses_the_shared_servers_shares_one_worker():
    using = [p for p in files() if SERVER_USE.search(p.read_text(encoding="utf-8"))]
    assert len(using) >= 10  # the pattern still finds them
    apart = [
        p.relative_to(TESTS_ROOT).as_posix() for p in using if worker_group(p) != "shared-servers"
    ]
    assert apart == []


def test_every_file_that_uses_the_ray_cluster_shares_one_worker():
    using = [p for p in files() if "ray_cluster" in p.read_text(encoding="utf-8")]
    assert {p.relative_to(TESTS_ROOT).as_posix() for p in using} == set(RAY_TESTS)
    assert {worker_group(p) for p in using} == {"ray"}


def test_any_other_file_is_its_own_group():
    path = TESTS_ROOT / "sql" / "test_a_new_file.py"
    assert worker_group(path) == "sql/test_a_new_file.py"
    assert worker_group(TESTS_ROOT / "integration" / "test_new.py") == "shared-servers"


def test_a_node_id_is_given_its_files_group(pytestconfig):
    root = Path(pytestconfig.rootpath)
    assert node_group("tests/integration/test_reflect.py::test_x[mysql]", root) == "shared-servers"
    ray = {
        node_group(n, root)
        for n in ("tests/scale/test_ray.py::y", "tests/bench/test_bench_ray.py::z")
    }
    assert ray == {"ray"}
    assert (
        node_group("tests/sql/test_sql_safety.py::test_z[a::b]", root) == "sql/test_sql_safety.py"
    )
