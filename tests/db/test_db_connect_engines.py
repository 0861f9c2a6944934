"""open_database for every engine: routing by URL, limits, one-line reasons, SQLite sandbox."""

from __future__ import annotations

import hashlib
import socket
import types
from pathlib import Path

import pytest

from acts_sql.db import connect
from acts_sql.db.connect import open_database
from acts_sql.db.sqlite import SQLiteExecutor
from acts_sql.errors import ConfigError, DatabaseOpenError


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize(
    ("scheme", "name"),
    [("postgresql", "PostgreSQL"), ("mysql", "MySQL/MariaDB"), ("mariadb", "MySQL/MariaDB")],
)
def test_unreachable_server_is_one_line_without_password(scheme: str, name: str) -> None:
    port = _closed_port()
    with pytest.raises(DatabaseOpenError) as caught:
        open_database(f"{scheme}://ann:hunter2@127.0.0.1:{port}/shop")
    message = str(caught.value)
    assert message.startswith(f"cannot connect to {name} at ann@127.0.0.1:{port}/shop")
    assert "hunter2" not in message and "\n" not in message


def test_a_missing_executor_module_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(connect.EXECUTOR_MODULES, "oracle", ("acts_sql.db.no_such", "oracle"))
    with pytest.raises(DatabaseOpenError, match="Oracle is not available in this build"):
        open_database("oracle://u:p@h/svc")


def test_the_agreed_entry_point_gets_the_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, object] = {}

    def open_url(url: str, *, timeout: float | None, max_rows: int | None) -> object:
        seen.update(url=url, timeout=timeout, max_rows=max_rows)
        return "executor"

    fake = types.ModuleType("acts_sql.db.fake_mssql")
    fake.open_url = open_url  # type: ignore[attr-defined]
    monkeypatch.setitem(__import__("sys").modules, "acts_sql.db.fake_mssql", fake)
    monkeypatch.setitem(connect.EXECUTOR_MODULES, "sqlserver", ("acts_sql.db.fake_mssql", "mssql"))
    assert open_database("mssql://u:p@h/db", timeout=3, max_rows=5) == "executor"
    assert seen == {"url": "mssql://u:p@h/db", "timeout": 3, "max_rows": 5}
    with pytest.raises(DatabaseOpenError, match="writes cannot be sandboxed for SQL Server"):
        open_database("mssql://u:p@h/db", allow_writes=True)


@pytest.mark.parametrize(("timeout", "max_rows"), [(0, None), (-1, None), (None, 0)])
def test_bad_limits_are_config_errors(shop_path: Path, timeout: float, max_rows: int) -> None:
    with pytest.raises(ConfigError):
        open_database(str(shop_path), timeout=timeout, max_rows=max_rows)


def test_dialect_must_fit_the_url() -> None:
    with pytest.raises(DatabaseOpenError, match="unsupported dialect 'sqlite'"):
        open_database("postgresql://u@127.0.0.1:1/db", dialect="sqlite")


def test_sqlite_limits_given_at_open_time(shop_path: Path) -> None:
    executor = open_database(str(shop_path), max_rows=2)
    try:
        result = executor.execute("SELECT * FROM customers")
        assert result.row_count == 2 and result.truncated
        assert executor.execute("SELECT * FROM customers", max_rows=10).row_count == 4
    finally:
        executor.close()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_sqlite_writes_go_to_a_copy_that_is_deleted(shop_path: Path) -> None:
    before = _digest(shop_path)
    executor = open_database(f"sqlite:///{shop_path}", allow_writes=True)
    assert isinstance(executor, SQLiteExecutor)
    copy = executor.path
    assert copy != shop_path and copy.exists()
    assert executor.execute("ALTER TABLE customers ADD COLUMN vip INTEGER DEFAULT 0").ok
    assert executor.execute("DELETE FROM orders").ok
    assert executor.execute("SELECT count(*) FROM orders").rows == [[0]]
    assert executor.execute("ATTACH DATABASE 'x.db' AS x").status == "blocked"
    with executor.scratch() as session:  # scratch sessions see the copy
        assert session.execute("SELECT vip FROM customers").ok
    executor.close()
    assert not copy.exists() and not copy.parent.exists()
    assert _digest(shop_path) == before
