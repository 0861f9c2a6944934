"""How the suite is split between pytest-xdist workers (``-n N --dist loadfile``, as
`scripts/test.sh` runs it): a worker takes one group at a time, and a group is a test file
(`worker_group`), except that the files which share a database server or the Ray cluster form
one group each (`FileGroupScheduling`, from `conftest.pytest_xdist_make_scheduler`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

SHARED_SERVER_TESTS = (
    "integration/",
    "everyday/",
    "bench/test_clock.py",
    "bench/test_dev_split.py",
    "bench/test_evaluator_servers.py",
    "bench/test_replay_kept_runs.py",
    "db/test_db_url_dialects.py",
    "db/test_doctor.py",
    "scripts/test_services.py",
    "server/test_postgres.py",
    "server/test_store.py",
    "tools/test_syntax_rules_engines.py",
)
"""Test files (or folders) that create, fill or drop databases of fixed names on the shared
PostgreSQL and MariaDB test servers: they run on one worker, one after the other."""
RAY_TESTS = ("bench/test_bench_ray.py", "scale/test_ray.py")
"""Test files that share the session's Ray cluster (`ray_cluster`): one worker starts it."""
TESTS_ROOT = Path(__file__).resolve().parent


def worker_group(path: Path) -> str:
    """The group of a test file: the shared servers' or Ray's, else the file itself."""
    if not path.is_relative_to(TESTS_ROOT):
        return path.as_posix()
    relative = path.relative_to(TESTS_ROOT).as_posix()
    if relative.startswith(SHARED_SERVER_TESTS):
        return "shared-servers"
    if relative in RAY_TESTS:
        return "ray"
    return relative


def node_group(nodeid: str, root: Path) -> str:
    """The group of the test `nodeid` (its path relative to the rootdir `root`)."""
    return worker_group((root / nodeid.split("::", 1)[0]).resolve())


def file_group_scheduling(config: Any, log: Any) -> Any:
    """xdist's file-by-file scheduling with `worker_group` as the unit of work (xdist's own
    ``loadgroup`` marks are not used: with pytest 9.2 its renamed node ids lose the group)."""
    from xdist.scheduler import LoadScopeScheduling

    root = Path(config.rootpath)

    class FileGroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return node_group(nodeid, root)

    return FileGroupScheduling(config, log)
