"""scripts/services.sh: servers in a private directory, and an exit status that says what started.

The tests start real servers (a few seconds) with the binaries already on
the machine; they skip where those are missing (the script would install
them with apt-get) and, for the private-directory case, where the script
does not run as root (only root hands the servers to their own users).
"""

from __future__ import annotations

import glob
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "services.sh"
HAS_POSTGRES = bool(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
HAS_MARIADB = bool(shutil.which("mariadbd") or os.path.exists("/usr/sbin/mariadbd"))


def services(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "ACTS_SQL_REQUIRE_SERVICES": "0", **env}
    return subprocess.run(
        ["bash", str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=environment,
    )


@pytest.fixture
def private() -> Iterator[Path]:
    """A new private directory (mode 0700, as `mktemp -d` makes it) right under the temp dir.

    Not pytest's tmp_path: pytest resets its shared base directory to 0700 whenever a
    session starts, which would take the servers' way in away in the middle of a test.
    """
    path = Path(tempfile.mkdtemp(prefix="acts-sql-services-test."))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def read_env(directory: Path) -> dict[str, str]:
    found = {}
    for line in (directory / "env").read_text().splitlines():
        name, _, value = line.removeprefix("export ").partition("=")
        found[name] = value.strip("'")
    return found


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.skipif(os.geteuid() != 0, reason="the servers run as their own users only as root")
@pytest.mark.skipif(not (HAS_POSTGRES and HAS_MARIADB), reason="PostgreSQL/MariaDB not installed")
def test_servers_start_inside_a_private_directory(private):
    assert mode(private) == 0o700
    target = private / "s"
    started = services("start", str(target))
    try:
        assert started.returncode == 0, started.stderr
        assert started.stdout.strip() == str(target)
        urls = read_env(target)
        assert set(urls) == {"ACTS_SQL_TEST_PG_URL", "ACTS_SQL_TEST_MYSQL_URL"}, started.stderr
        assert f"{private} is private (mode 700)" in started.stderr
        assert mode(private) & stat.S_IXOTH
        import psycopg2
        import pymysql

        from acts_sql.bench.servers import mysql_connect_kwargs, postgres_connect_kwargs

        conn = psycopg2.connect(**postgres_connect_kwargs(urls["ACTS_SQL_TEST_PG_URL"]))
        conn.close()
        pymysql.connect(**mysql_connect_kwargs(urls["ACTS_SQL_TEST_MYSQL_URL"], "mysql")).close()
    finally:
        stopped = services("stop", str(target))
    assert stopped.returncode == 0, stopped.stderr
    assert not target.exists()
    assert mode(private) == 0o700  # the search permission is taken back


@pytest.mark.skipif(os.geteuid() != 0, reason="the servers run as their own users only as root")
@pytest.mark.skipif(not HAS_POSTGRES, reason="PostgreSQL not installed")
def test_a_second_services_dir_keeps_the_permission_until_it_stops(private):
    first, second = private / "a", private / "b"
    try:
        assert services("start", str(first), "postgresql").returncode == 0
        later = services("start", str(second), "postgresql")
        assert later.returncode == 0, later.stderr
        assert "is private" not in later.stderr  # the first one opened it already
        assert services("stop", str(first)).returncode == 0
        assert mode(private) & stat.S_IXOTH  # the second one still needs it
        import psycopg2

        from acts_sql.bench.servers import postgres_connect_kwargs

        url = read_env(second)["ACTS_SQL_TEST_PG_URL"]
        psycopg2.connect(**postgres_connect_kwargs(url)).close()
    finally:
        services("stop", str(first))
        services("stop", str(second))
    assert mode(private) == 0o700


@pytest.mark.skipif(not HAS_POSTGRES, reason="PostgreSQL not installed")
def test_a_requested_server_that_does_not_start_fails_the_script(private):
    target = private / "s"
    target.mkdir()
    (target / "pg").write_text("a file where the data directory should go")
    failed = services("start", str(target), "postgresql")
    try:
        assert failed.returncode == 1
        assert failed.stdout.strip() == str(target)  # still printed, to stop what started
        assert f"cannot create {target}/pg" in failed.stderr
        assert "ACTS_SQL_TEST_PG_URL" not in read_env(target)
    finally:
        services("stop", str(target))
    target.mkdir()
    (target / "pg").write_text("again")
    required = services("start", str(target), "postgresql", ACTS_SQL_REQUIRE_SERVICES="1")
    assert required.returncode == 1
    assert required.stdout == ""
    assert not target.exists()  # everything stopped and removed


def test_an_unknown_server_name_fails(private):
    result = services("start", str(private / "s"), "oracle")
    try:
        assert result.returncode == 1
        assert "unknown server 'oracle' (postgresql, mariadb)" in result.stderr
    finally:
        services("stop", str(private / "s"))


@pytest.mark.skipif(not HAS_POSTGRES, reason="no PostgreSQL binaries on this machine")
def test_a_dir_an_earlier_start_used_is_refused_until_it_is_stopped(private):
    target = private / "s"
    first = services("start", str(target), "postgresql")
    try:
        assert first.returncode == 0, first.stderr
        url = read_env(target)["ACTS_SQL_TEST_PG_URL"]
        again = services("start", str(target), "postgresql")
        assert again.returncode == 2
        assert "already holds servers from an earlier start" in again.stderr
        assert read_env(target)["ACTS_SQL_TEST_PG_URL"] == url  # the running server's env kept
    finally:
        services("stop", str(target))
    assert not target.exists()
