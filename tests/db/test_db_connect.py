"""open_database: URLs, plain paths and one-line reasons for what cannot be opened."""

from __future__ import annotations

from pathlib import Path

import pytest

from acts_sql.db.connect import open_database
from acts_sql.db.sqlite import SQLiteExecutor
from acts_sql.errors import DatabaseOpenError


def _count(url: str) -> object:
    executor = open_database(url)
    try:
        assert isinstance(executor, SQLiteExecutor)
        return executor.execute("SELECT count(*) FROM customers").rows
    finally:
        executor.close()


def test_plain_path(shop_path: Path) -> None:
    assert _count(str(shop_path)) == [[4]]


def test_absolute_url(shop_path: Path) -> None:
    assert _count(f"sqlite:///{shop_path}") == [[4]]  # sqlite:////abs/path


def test_relative_url(shop_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(shop_path.parent.parent)
    assert _count(f"sqlite:///{shop_path.parent.name}/{shop_path.name}") == [[4]]


def test_dialect_may_be_named(shop_path: Path) -> None:
    open_database(str(shop_path), dialect="sqlite").close()
    with pytest.raises(DatabaseOpenError, match="postgres"):
        open_database(str(shop_path), dialect="postgres")


def _reason(url: str) -> str:
    with pytest.raises(DatabaseOpenError) as info:
        open_database(url)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_missing_file(tmp_path: Path) -> None:
    assert "not found" in _reason(str(tmp_path / "nope.db"))
    assert "not found" in _reason(f"sqlite:///{tmp_path}/nope.db")


def test_directory(tmp_path: Path) -> None:
    assert "directory" in _reason(str(tmp_path))


def test_text_file(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("SELECT 1;\n")
    assert "not a SQLite database" in _reason(str(path))


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    path.touch()
    assert "empty" in _reason(str(path))


def test_corrupt_file_with_header(tmp_path: Path) -> None:
    path = tmp_path / "bad.db"
    path.write_bytes(b"SQLite format 3\x00" + b"\x01" * 2000)
    assert "cannot read SQLite database" in _reason(str(path))


@pytest.mark.parametrize("url", ["mongodb://u:secret@h/db", "redis://h", "http://x/y"])
def test_unknown_scheme(url: str) -> None:
    message = _reason(url)
    assert "unsupported database URL scheme" in message
    assert "sqlite" in message and "postgresql" in message and "secret" not in message


def test_url_without_path() -> None:
    assert "needs a file path" in _reason("sqlite://")
