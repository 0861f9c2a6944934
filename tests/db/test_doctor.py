"""`acts-sql doctor` (issue 37): on a superuser and on a read-only role the test creates, on
PostgreSQL and MariaDB, and on SQLite files this OS user can or cannot write.

Each server test makes its own database and role with a unique name and drops both."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pymysql
import pytest
from typer.testing import CliRunner

from acts_sql.cli.app import app
from acts_sql.db.doctor import CheckName, DoctorReport, diagnose
from acts_sql.db.url import parse_url

PG_URL = os.environ.get("ACTS_SQL_TEST_PG_URL")
MYSQL_URL = os.environ.get("ACTS_SQL_TEST_MYSQL_URL")
PASSWORD = "doctor-pw-1"
runner = CliRunner()


def answers(report: DoctorReport) -> dict[str, bool | None]:
    names = (
        CheckName.SUPERUSER,
        CheckName.CAN_WRITE,
        CheckName.READS_FILES,
        CheckName.GUARD,
        CheckName.ENGINE_READ_ONLY,
        CheckName.WRITABLE_COPY,
    )
    return {name.value: report.check(name).answer for name in names}


def with_account(url: str, user: str, password: str, database: str) -> str:
    parsed = parse_url(url)
    return f"{parsed.scheme}://{user}:{password}@{parsed.endpoint()}/{database}"


# ---------------------------------------------------------------- PostgreSQL


@pytest.fixture
def pg_database() -> Iterator[tuple[str, str]]:
    """(superuser URL of a fresh database, a login role with SELECT only on it)."""
    if not PG_URL:
        pytest.skip("no live PostgreSQL: ACTS_SQL_TEST_PG_URL is not set")
    tag = secrets.token_hex(4)
    database, role = f"acts_doctor_{tag}", f"acts_doctor_ro_{tag}"
    with psycopg.connect(PG_URL, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {database}")
        admin.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{PASSWORD}'")
    url = with_account(PG_URL, *_pg_owner(), database)
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE TABLE orders (id SERIAL PRIMARY KEY, total NUMERIC)")
            conn.execute("INSERT INTO orders (total) VALUES (1.5), (2.5)")
            conn.execute(f"GRANT CONNECT ON DATABASE {database} TO {role}")
            conn.execute(f"GRANT USAGE ON SCHEMA public TO {role}")
            conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")
        yield url, role
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
            admin.execute(f"DROP ROLE IF EXISTS {role}")


def _pg_owner() -> tuple[str, str]:
    parsed = parse_url(PG_URL or "")
    return parsed.username or "", parsed.password or ""


def test_postgres_superuser_can_do_everything(pg_database):
    url, _role = pg_database
    report = diagnose(url)
    assert answers(report) == {
        "superuser": True,
        "can write": True,
        "can read server files": True,
        "read-only guard": True,
        "engine read-only": True,
        "--allow-writes copy": True,
    }
    assert {w.name for w in report.warnings} >= {CheckName.SUPERUSER, CheckName.CAN_WRITE}
    assert PASSWORD not in report.model_dump_json() and "acts-test-pw" not in report.database


def test_postgres_read_only_role_can_neither_write_nor_read_files(pg_database):
    url, role = pg_database
    ro_url = with_account(url, role, PASSWORD, parse_url(url).database or "")
    report = diagnose(ro_url)
    assert answers(report) == {
        "superuser": False,
        "can write": False,
        "can read server files": False,
        "read-only guard": True,
        "engine read-only": True,
        "--allow-writes copy": False,
    }
    assert report.warnings == []
    # one grant more and the doctor sees it: INSERT on the table, nextval on its sequence
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"GRANT INSERT ON orders TO {role}")
        conn.execute(f"GRANT USAGE ON SEQUENCE orders_id_seq TO {role}")
    write = diagnose(ro_url).check(CheckName.CAN_WRITE)
    assert write.answer is True and write.level == "warning"
    assert "public.orders" in write.value and "public.orders_id_seq" in write.value


def test_doctor_command_json_and_table(pg_database):
    url, role = pg_database
    ro_url = with_account(url, role, PASSWORD, parse_url(url).database or "")
    as_json = runner.invoke(app, ["doctor", "--db", ro_url, "--json"])
    table = runner.invoke(app, ["doctor", "--db", url])
    assert as_json.exit_code == 0 and table.exit_code == 0, table.output
    report = DoctorReport.model_validate(json.loads(as_json.stdout))
    assert report.check(CheckName.SUPERUSER).answer is False
    for row in ("superuser", "can write", "can read server files", "engine read-only"):
        assert row in table.stdout
    assert "least-privilege-role" in table.stdout and PASSWORD not in table.stdout


def test_a_connection_that_fails_is_one_error_line_and_exit_2(pg_database):
    url, role = pg_database
    wrong = with_account(url, role, "not-the-password", parse_url(url).database or "")
    result = runner.invoke(app, ["doctor", "--db", wrong])
    assert result.exit_code == 2 and result.stdout == ""
    err = result.stderr.strip()
    assert err.startswith("error: ") and len(err.splitlines()) == 1
    assert "not-the-password" not in err


# ---------------------------------------------------------------- MariaDB


def _mysql(url: str, database: str | None = None) -> Any:
    parsed = parse_url(url)
    return pymysql.connect(
        host=parsed.host,
        port=parsed.port,
        user=parsed.username,
        password=parsed.password or "",
        database=database,
        autocommit=True,
    )


@pytest.fixture
def mysql_database() -> Iterator[tuple[str, str]]:
    """(superuser URL of a fresh database, a user with SELECT only on it)."""
    if not MYSQL_URL:
        pytest.skip("no live MariaDB: ACTS_SQL_TEST_MYSQL_URL is not set")
    tag = secrets.token_hex(4)
    database, user = f"acts_doctor_{tag}", f"doctor_ro_{tag}"
    hosts = ("%", "localhost")
    conn = _mysql(MYSQL_URL)
    try:
        with conn.cursor() as cursor:
            cursor.execute(f"CREATE DATABASE {database}")
            cursor.execute(f"CREATE TABLE {database}.orders (id INT PRIMARY KEY, total DECIMAL)")
            for host in hosts:
                cursor.execute(f"CREATE USER '{user}'@'{host}' IDENTIFIED BY '{PASSWORD}'")
                # GRANT SELECT ON db.*, written as its row: the test server's `acts` has ALL
                # PRIVILEGES but not GRANT OPTION
                cursor.execute(
                    "INSERT INTO mysql.db (Host, Db, User, Select_priv) VALUES (%s, %s, %s, 'Y')",
                    (host, database, user),
                )
            cursor.execute("FLUSH PRIVILEGES")
        yield MYSQL_URL.rsplit("/", 1)[0] + f"/{database}", user
    finally:
        with conn.cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS {database}")
            for host in hosts:
                cursor.execute(f"DROP USER IF EXISTS '{user}'@'{host}'")
        conn.close()


def test_mariadb_superuser_and_read_only_user(mysql_database):
    url, user = mysql_database
    admin = diagnose(url)
    assert admin.check(CheckName.SUPERUSER).answer is True
    assert admin.check(CheckName.CAN_WRITE).answer is True
    assert admin.check(CheckName.WRITABLE_COPY).answer is True
    ro = diagnose(with_account(url, user, PASSWORD, parse_url(url).database or ""))
    assert answers(ro) == {
        "superuser": False,
        "can write": False,
        "can read server files": False,
        "read-only guard": True,
        "engine read-only": True,
        "--allow-writes copy": False,
    }
    assert ro.warnings == []


# ---------------------------------------------------------------- SQLite files


def _sqlite_file(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x INTEGER)")
    conn.commit()
    conn.close()
    return path


def _as_nobody(path: Path) -> dict[str, Any]:
    """The report for `path` made in a child process running as the user nobody."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop to nobody, report, exit without running pytest's atexit
        code = 0
        try:
            os.close(read)
            os.setgid(65534)
            os.setuid(65534)
            os.write(write, diagnose(str(path)).model_dump_json().encode())
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0 and data
    return json.loads(data)


def test_sqlite_file_writable_or_not_for_this_os_user():
    folder = Path(tempfile.mkdtemp(prefix="acts-doctor-"))
    try:
        _file_checks(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _file_checks(tmp_path: Path) -> None:
    writable = _sqlite_file(tmp_path / "w.db")
    report = diagnose(f"sqlite:///{writable}")
    assert report.check(CheckName.CAN_WRITE).answer is True
    assert report.check(CheckName.SUPERUSER).answer is None
    assert report.check(CheckName.ENGINE_READ_ONLY).answer is True
    assert report.check(CheckName.READS_FILES).answer is False
    read_only = _sqlite_file(tmp_path / "r.db")
    read_only.chmod(0o444)
    tmp_path.chmod(0o755)
    if os.getuid() == 0:  # root writes any file: ask as an ordinary user
        checks = {c["name"]: c for c in _as_nobody(read_only)["checks"]}
        assert checks["can write"]["answer"] is False
        writable.chmod(0o666)
        assert {c["name"]: c for c in _as_nobody(writable)["checks"]}["can write"]["answer"]
    else:
        assert diagnose(str(read_only)).check(CheckName.CAN_WRITE).answer is False
