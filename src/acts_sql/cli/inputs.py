"""Command-line inputs and outputs checked before any work starts.

Text given as a file (``--sql-file PATH``, ``-`` for stdin) is read here; an
output path (``--trace``, ``--html``, ``--out``, ...) is checked for being
writable before the work that would fill it, so a typo costs nothing. Every
problem is a ConfigError with a one-line reason (the CLI exits 2).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import TextIO

from acts_sql.errors import ConfigError

STDIN = "-"


def text_option(
    value: str, path: Path | None, *, flag: str, file_flag: str, stdin: TextIO | None = None
) -> str:
    """The text of `flag` or, read from `path`, of `file_flag` (not both)."""
    if path is None:
        return value
    if value:
        raise ConfigError(f"give {flag} or {file_flag}, not both")
    if str(path) == STDIN:
        return (stdin or sys.stdin).read()
    try:
        return path.read_text(encoding="utf-8")
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
