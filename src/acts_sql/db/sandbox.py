"""Throw-away copies of a database, for statements that must write.

The user's database is never written. When writes must be tried
(`allow_writes=True`: BIRD-CRITIC Management tasks, `--allow-writes`), the
executor works on a copy made here and drops it at `close()`; an `atexit`
hook drops copies still alive when the process ends. When no copy can be
made the executor refuses to open (`DatabaseOpenError`): there is no fallback
that would run anything on the original.

Each engine's copy lives in its own module, with these helpers:

- PostgreSQL: `CREATE DATABASE <copy> TEMPLATE <original>` (`postgres.PostgresCopy`);
- MySQL/MariaDB: a scratch database on the same server; each table copied
  with `CREATE TABLE ... LIKE` + `INSERT ... SELECT`, then the views
  (`mysql.MySQLCopy`);
- SQLite and DuckDB: a file copy in a private temp dir (`FileCopy`, here;
  SQLite's executor passes its online-backup copier).

Leftovers. A process killed with SIGKILL runs no `atexit` hook, so every copy's
name says who made it: `acts_sandbox_<pid>_<start>_<host>_<random>` (databases)
and `acts-sql-sandbox-<pid>-<start>-<host>-<random>` (temp folders), where
`<start>` is the owner's start time (clock ticks since boot, field 22 of
`/proc/<pid>/stat`; 0 where there is no /proc) and `<host>` a short hash of the
host name and pid namespace. `owner_gone` says whether that process has ended: a
pid now used by a process that started at another time is not the owner; a copy
made on another host (or in another container) is never judged. `sweep_temp_dir`
here and each server module's `sweep_orphans` remove only copies whose owner is
gone.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import re
import secrets
import shutil
import socket
import tempfile
import threading
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

COPY_PREFIX = "acts_sandbox_"
DIR_PREFIX = "acts-sql-sandbox-"
COPY_NAME = re.compile(r"^acts_sandbox_(\d+)_(\d+)_([0-9a-f]{6})_[0-9a-f]{8}$")
"""A copy database made by this version: pid, start time, host, random part."""
DIR_NAME = re.compile(r"^acts-sql-sandbox-(\d+)-(\d+)-([0-9a-f]{6})-[a-z0-9_]+$")
"""A copy folder (`tempfile.mkdtemp` adds the random part)."""
UNKNOWN_START = 0
"""The start time written where the system does not tell it (no /proc)."""

_cleanups: dict[int, Callable[[], None]] = {}
"""Live copies by id -> their drop function; emptied by close() or at exit."""
_cleanups_lock = threading.Lock()


def register_cleanup(drop: Callable[[], None]) -> int:
    """Remember `drop` so that it runs at exit if nobody ran it before; returns a handle."""
    handle = id(drop)
    with _cleanups_lock:
        _cleanups[handle] = drop
    return handle


def unregister_cleanup(handle: int) -> None:
    with _cleanups_lock:
        _cleanups.pop(handle, None)


@atexit.register
def drop_all_copies() -> None:
    """Drop every copy still alive (at interpreter exit)."""
    with _cleanups_lock:
        pending = list(_cleanups.values())
        _cleanups.clear()
    for drop in pending:
        with suppress(Exception):
            drop()


# ------------------------------------------------------------------ owners


@dataclass(frozen=True)
class Owner:
    """The process that made a copy: its pid, start time and host tag."""

    pid: int
    start: int
    host: str


def host_tag() -> str:
    """Six hex digits naming where pids mean something: a hash of the host name and of
    the pid namespace (containers sharing a host name do not share pids)."""
    namespace = ""
    with suppress(OSError):
        namespace = os.readlink("/proc/self/ns/pid")
    return hashlib.sha256(f"{socket.gethostname()}|{namespace}".encode()).hexdigest()[:6]


def process_start(pid: int) -> int | None:
    """When `pid` started (clock ticks since boot), or None when it does not run
    (or is a zombie). Without /proc: UNKNOWN_START while the pid exists."""
    stat = Path(f"/proc/{pid}/stat")
    if Path("/proc/self/stat").exists():
        try:
            text = stat.read_text()
        except OSError:
            return None
        fields = text[text.rfind(")") + 2 :].split()  # after "pid (comm) "
        if len(fields) < 20 or fields[0] in ("Z", "X"):
            return None
        return int(fields[19])  # field 22 of the whole line
    return UNKNOWN_START if _pid_exists(pid) else None


def _pid_exists(pid: int) -> bool:
    """Without /proc: does `pid` exist? True when unsure (never on Windows, where
    os.kill would end the process)."""
    if os.name != "posix":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists, owned by someone else
    return True


def current_owner() -> Owner:
    pid = os.getpid()
    start = process_start(pid)
    return Owner(pid, UNKNOWN_START if start is None else start, host_tag())


def owner_gone(owner: Owner) -> bool:
    """True only when the process that made a copy has certainly ended: it was made
    on this host and its pid runs no more, or runs a process started at another time."""
    if owner.host != host_tag():
        return False
    now = process_start(owner.pid)
    if now is None:
        return True
    return owner.start != UNKNOWN_START and now != UNKNOWN_START and now != owner.start


def copy_owner(name: str) -> Owner | None:
    """The owner written in a copy database's or folder's name; None for any other name."""
    match = COPY_NAME.match(name) or DIR_NAME.match(name)
    if match is None:
        return None
    return Owner(int(match.group(1)), int(match.group(2)), match.group(3))


def is_orphan(name: str) -> bool:
    """True for a copy (database or folder) whose owner process is gone."""
    owner = copy_owner(name)
    return owner is not None and owner_gone(owner)


def copy_name() -> str:
    """A fresh, unguessable name for a copy: acts_sandbox_<pid>_<start>_<host>_<hex>."""
    me = current_owner()
    return f"{COPY_PREFIX}{me.pid}_{me.start}_{me.host}_{secrets.token_hex(4)}"


def dir_prefix() -> str:
    """The prefix of this process's copy folders: acts-sql-sandbox-<pid>-<start>-<host>-."""
    me = current_owner()
    return f"{DIR_PREFIX}{me.pid}-{me.start}-{me.host}-"


# ------------------------------------------------------------------ file copies


class FileCopy:
    """A copy of a database file in a private temp dir, deleted by `drop()`.

    `copier(src, dst)` makes the copy (default: `shutil.copyfile`); SQLite
    uses its online backup API so a database being written is copied
    consistently. Folders that dead processes left are swept first.
    """

    def __init__(self, source: Path, copier: Callable[[Path, Path], None] | None = None) -> None:
        self.source = Path(source)
        sweep_temp_dir()
        self.dir = Path(tempfile.mkdtemp(prefix=dir_prefix()))
        self.path = self.dir / self.source.name
        try:
            (copier or _copy_file)(self.source, self.path)
        except Exception:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise
        self._handle = register_cleanup(self.drop)

    def drop(self) -> None:
        unregister_cleanup(self._handle)
        shutil.rmtree(self.dir, ignore_errors=True)


def _copy_file(source: Path, target: Path) -> None:
    shutil.copyfile(source, target)
    for suffix in (".wal",):  # DuckDB keeps uncheckpointed changes beside the file
        side = source.with_name(source.name + suffix)
        if side.exists():
            shutil.copyfile(side, target.with_name(target.name + suffix))


def sweep_temp_dir(directory: Path | None = None) -> list[Path]:
    """Delete the copy folders in `directory` (default: the temp dir) that belong to
    this user and whose owner process is gone; returns those deleted. Never raises."""
    root = Path(directory) if directory is not None else Path(tempfile.gettempdir())
    removed: list[Path] = []
    uid = os.getuid() if hasattr(os, "getuid") else None
    with suppress(OSError):
        for entry in root.glob(f"{DIR_PREFIX}*"):
            with suppress(OSError):
                info = entry.lstat()
                mine = uid is None or info.st_uid == uid
                if mine and entry.is_dir() and not entry.is_symlink() and is_orphan(entry.name):
                    shutil.rmtree(entry)
                    removed.append(entry)
    return removed
