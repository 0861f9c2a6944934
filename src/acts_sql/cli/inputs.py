"""Command-line inputs and outputs checked before any work starts.

Text given as a file (``--sql-file PATH``, ``-`` for stdin) is read here (a
byte-order mark at its start is dropped; above the input limits of
`acts_sql.engine.inputs` it is refused after reading just past the limit); an
output path (``--trace``, ``--html``, ``--out``, ...) is checked for being
writable before the work that would fill it, so a typo costs nothing. Every
problem is a ConfigError with a one-line reason (the CLI exits 2).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import TextIO

from acts_sql.engine.inputs import check_size
from acts_sql.errors import ConfigError

STDIN = "-"
BOM = "\ufeff"
"""A UTF-8 byte-order mark, as some editors write at the start of a file."""


def text_option(
    value: str | None,
    path: Path | None,
    *,
    flag: str,
    file_flag: str,
    limit: int,
    stdin: TextIO | None = None,
) -> str | None:
    """The text of `flag` or, read from `path`, of `file_flag` (not both); None when
    neither was given. A UTF-8 byte-order mark at the start of the file (or of stdin) is
    dropped; more than `limit` characters is an InputTooLargeError, found after reading at
    most `limit` + 1 of them."""
    if path is None:
        return value
    if value is not None:
        raise ConfigError(f"give {flag} or {file_flag}, not both")
    if str(path) == STDIN:
        text = (stdin or sys.stdin).read(limit + 2)
    else:
        text = _read_file(path, file_flag, limit)
    text = text.removeprefix(BOM)
    check_size(text, what=f"{file_flag} {path}", limit=limit)
    return text


def _read_file(path: Path, file_flag: str, limit: int) -> str:
    """At most `limit` + 2 characters of `path` (a BOM and one more than the limit)."""
    try:
        with path.open(encoding="utf-8") as handle:
            return handle.read(limit + 2)
    except FileNotFoundError:
        raise ConfigError(f"{file_flag} {path}: no such file") from None
    except IsADirectoryError:
        raise ConfigError(f"{file_flag} {path}: is a directory") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{file_flag} {path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise ConfigError(f"{file_flag} {path}: cannot read ({exc.strerror or exc})") from None


def one_stdin(paths: dict[str, Path | None]) -> None:
    """ConfigError when more than one of the `paths` (flag name -> value) is ``-``."""
    readers = [flag for flag, path in paths.items() if path is not None and str(path) == STDIN]
    if len(readers) > 1:
        raise ConfigError(f"only one of {' and '.join(readers)} can read stdin (-)")


def writable_file(path: Path | None, flag: str) -> None:
    """ConfigError unless `path` can be written; neither creates nor changes it."""
    if path is None:
        return
    try:
        if path.is_dir():
            raise ConfigError(f"{flag} {path}: is a directory")
        parent = path.parent
        if not parent.is_dir():
            what = "is not a directory" if parent.exists() else "does not exist"
            raise ConfigError(f"{flag} {path}: the directory {parent} {what}")
        if path.exists():
            with path.open("a", encoding="utf-8"):  # appends nothing: the file is unchanged
                pass
        else:
            _probe(parent)
    except OSError as exc:
        raise ConfigError(f"{flag} {path}: cannot write ({exc.strerror or exc})") from None


def writable_dir(path: Path | None, flag: str) -> None:
    """ConfigError unless `path` is, or can be made, a directory to write in."""
    if path is None:
        return
    try:
        existing = path
        while not existing.exists() and existing != existing.parent:
            existing = existing.parent
        if not existing.is_dir():
            where = "" if existing == path else f": {existing}"
            raise ConfigError(f"{flag} {path}: not a directory{where}")
        _probe(existing)
    except OSError as exc:
        raise ConfigError(f"{flag} {path}: cannot write ({exc.strerror or exc})") from None


def _probe(directory: Path) -> None:
    """Create and remove a file in `directory` (OSError when that is not allowed)."""
    with tempfile.NamedTemporaryFile(dir=directory, prefix=".acts-sql-probe-"):
        pass
