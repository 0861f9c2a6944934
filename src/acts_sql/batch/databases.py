"""`--databases config.toml`: names for the databases a batch refers to.

    [databases]
    shop = "postgresql://reader@db.internal/shop"
    demo = "sqlite:///demo.sqlite"          # relative to this file's folder
    [databases.books]
    url = "duckdb:///books.duckdb"

A task's ``database`` is a name from this file, else a database URL or a
path to a database file. Relative file paths are made absolute when the
batch starts (a path in the file: against the file's folder; on a task line:
against the current directory), so that worker processes and Ray actors,
whatever their working directory, open the same files.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from acts_sql.db.url import has_scheme, parse_url
from acts_sql.errors import ConfigError, DatabaseOpenError
from acts_sql.sql.dialects import get_dialect


class DatabaseCatalog(BaseModel):
    """Database names and their URLs (absolute file paths)."""

    urls: dict[str, str] = Field(default_factory=dict, repr=False)
    source: str = ""

    @classmethod
    def load(cls, path: Path | None) -> DatabaseCatalog:
        """The catalog of a TOML file, or an empty one; ConfigError for a bad file."""
        if path is None:
            return cls()
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8-sig"))  # -sig: drop a BOM
        except OSError as exc:
            why = exc.strerror or exc
            raise ConfigError(f"--databases {path}: cannot read it ({why})") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"--databases {path}: not valid TOML ({exc})") from None
        table = data.get("databases")
        if not isinstance(table, dict):
            raise ConfigError(f"--databases {path}: expected a [databases] table of name = URL")
        base = path.resolve().parent
        urls = {name: _entry_url(name, value, path, base) for name, value in table.items()}
        return cls(urls=urls, source=str(path))

    def resolve(self, database: str, base: Path) -> str:
        """The URL of a task's ``database``; DatabaseOpenError when it is none."""
        text = database.strip()
        if text in self.urls:
            return self.urls[text]
        if has_scheme(text):
            return absolute_url(text, base)
        path = Path(text).expanduser()
        path = path if path.is_absolute() else base / path
        if path.is_file():
            return str(path)
        where = f" and not a name in {self.source}" if self.source else ""
        raise DatabaseOpenError(
            f"database {text!r} is not a URL, not a database file{where}", database=text
        )


def _entry_url(name: str, value: Any, path: Path, base: Path) -> str:
    url = value.get("url") if isinstance(value, dict) else value
    if not isinstance(url, str) or not url.strip():
        raise ConfigError(f'--databases {path}: {name!r} needs a URL (name = "URL")')
    try:
        return absolute_url(url.strip(), base) if has_scheme(url) else str(base / url.strip())
    except DatabaseOpenError as exc:
        raise ConfigError(f"--databases {path}: {name!r}: {exc}") from None


def absolute_url(url: str, base: Path) -> str:
    """`url` with a relative file path (``sqlite:///x.db``) made absolute against `base`."""
    parsed = parse_url(url)
    if not get_dialect(parsed.dialect).embedded or not parsed.database:
        return url
    if Path(parsed.database).is_absolute():
        return url
    scheme, _, rest = url.partition(":///")
    path, mark, query = rest.partition("?")
    return f"{scheme}:///{(base / path).resolve()}{mark}{query}"


__all__ = ["DatabaseCatalog", "absolute_url"]
