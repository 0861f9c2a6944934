"""DuckDB's settings are locked on every connection: no statement can change one.

Unlocked, ``SELECT * FROM enable_logging(storage='file', storage_path='/x')`` on a
read-only connection without external access broke every later statement and
aborted the process when the connection closed (SIGABRT, DuckDB 2.0.1), and
``enable_profiling()`` printed profiler boxes on stdout (into ``--json`` output).
The statements run in a child process, so that an abort fails the test (exit code
and output checked) instead of killing pytest. The child switches the read-only guard
off: the guard blocks these calls too (its function allowlist), and this test is about
the engine's own layer, which must hold without it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from acts_sql.db.duckdb_executor import CONNECT_CONFIG, DuckDBExecutor

SETTINGS_CHANGES = [
    "SELECT * FROM enable_logging(storage='file', storage_path='/x')",
    "SELECT * FROM enable_logging()",
    "SELECT * FROM disable_logging()",
    "SELECT * FROM enable_profiling()",
    "SELECT * FROM checkpoint()",
    "SELECT * FROM force_checkpoint()",
    "CHECKPOINT",
    "FORCE CHECKPOINT",
    "SET threads = 1",
    "SET enable_external_access = true",
    "SET lock_configuration = false",
    "RESET lock_configuration",
    "SET GLOBAL memory_limit = '1GB'",
    "PRAGMA enable_profiling",
    "PRAGMA threads = 1",
    "PRAGMA enable_logging",
    "SELECT set_config('threads', '1')",
]
"""Statements that would change a setting (or checkpoint): each must come back
blocked or as an error, the process must live on, and the settings stay as opened."""

CHILD = r"""
import json, sys
from acts_sql.db import guard
from acts_sql.db.duckdb_executor import DuckDBExecutor
from acts_sql.sql.safety import SafetyVerdict

guard.check_statement = lambda sql, dialect, **_: SafetyVerdict(allowed=True)
path, allow_writes, statements = sys.argv[1], sys.argv[2] == "1", json.loads(sys.argv[3])
executor = DuckDBExecutor(path, allow_writes=allow_writes)
report = {"results": [], "scratch": []}
for sql in statements:
    result = executor.execute(sql)
    after = executor.execute("SELECT count(*) FROM t")
    report["results"].append([sql, result.status, result.error, after.status, after.rows])
with executor.scratch() as session:
    for sql in statements:
        result = session.execute(sql)
        report["scratch"].append([sql, result.status, result.error])
settings = executor.run_internal(
    "SELECT name, value FROM duckdb_settings() WHERE name IN "
    "('lock_configuration', 'enable_external_access', 'enable_logging', 'threads', "
    "'enable_profiling', 'allow_community_extensions')"
)
report["settings"] = dict(settings.rows)
executor.close()
print("REPORT " + json.dumps(report, default=str))
"""


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "t.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute("CREATE TABLE t AS SELECT range AS i FROM range(3)")
    return path


def run_child(db: Path, *, allow_writes: bool) -> dict:
    """Run every settings change through an executor in a child; its report."""
    flag = "1" if allow_writes else "0"
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(db), flag, json.dumps(SETTINGS_CHANGES)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=db.parent,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.returncode == 0, f"child exit {done.returncode}:\n{done.stdout}\n{done.stderr}"
    lines = done.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("REPORT "), done.stdout  # nothing printed
    return json.loads(lines[0].removeprefix("REPORT "))


@pytest.mark.parametrize("allow_writes", [False, True], ids=["read-only", "copy"])
def test_settings_changes_never_abort_and_are_refused(db: Path, allow_writes: bool) -> None:
    report = run_child(db, allow_writes=allow_writes)
    for sql, status, error, after, rows in report["results"]:
        if "checkpoint" in sql.lower():
            assert status in {"ok", "blocked", "error"}, (sql, status, error)
        else:
            assert status in {"blocked", "error"}, (sql, status, error)
        assert (after, rows) == ("ok", [[3]]), (sql, after, rows)  # the session still works
    for sql, status, error in report["scratch"]:
        if "checkpoint" not in sql.lower():
            assert status in {"blocked", "error"}, ("scratch", sql, status, error)
    settings = report["settings"]
    assert settings["lock_configuration"] == "true"
    assert settings["enable_external_access"] == "false"
    assert settings["allow_community_extensions"] == "false"
    assert settings["enable_logging"] in {"0", "false"}
    assert settings["enable_profiling"] in {None, "None", ""}
    assert not Path("/x").exists()


def test_a_locked_setting_is_reported_as_blocked(db: Path) -> None:
    """The refusal DuckDB gives (the guard aside) reads as blocked, with the reason."""
    with DuckDBExecutor(db) as executor:
        result = executor._run_statement("SELECT * FROM enable_logging()", 10, 10.0)
        assert result.status == "blocked"
        assert "settings" in (result.error or "") and "locked" in (result.error or "")


def test_every_connection_and_cursor_is_locked(db: Path) -> None:
    """The copy's connection (writes allowed) and the scratch cursors inherit the lock."""
    assert CONNECT_CONFIG["lock_configuration"] is True
    for allow_writes in (False, True):
        with DuckDBExecutor(db, allow_writes=allow_writes) as executor:
            cursor = executor._conn.cursor()
            with pytest.raises(duckdb.InvalidInputException, match="locked"):
                cursor.execute("SET threads = 1")
            with executor.scratch() as session:
                locked = session.run_internal("SELECT current_setting('lock_configuration')")
                assert locked.rows == [[True]]
