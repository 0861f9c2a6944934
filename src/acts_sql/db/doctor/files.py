"""The doctor's questions for database files: SQLite and DuckDB.

A file has no roles: what matters is whether this OS user could change it
(acts-sql never opens it for writing, but another program run by the same
user could), and what the engine was told when acts-sql opened it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from acts_sql.db.doctor.report import Check, CheckName, Session, unanswered

DUCKDB_SETTINGS = (
    "SELECT current_setting('access_mode'), current_setting('enable_external_access'), "
    "current_setting('lock_configuration')"
)


def file_checks(session: Session, path: Path) -> list[Check]:
    """The rows for a SQLite or DuckDB file at `path`."""
    name = "SQLite" if session.dialect == "sqlite" else "DuckDB"
    size = path.stat().st_size if path.exists() else 0
    return [
        Check(
            name=CheckName.CONNECTION,
            value=f"{name} file {path} ({size:,} bytes)",
            level="ok",
        ),
        Check(
            name=CheckName.SUPERUSER,
            value="not applicable: a database file has no roles",
            meaning="what counts is who can write the file (next row)",
        ),
        _file_writes(path),
        _file_reads(session),
        _engine_read_only(session),
        _copy(path, size),
    ]


def _file_writes(path: Path) -> Check:
    writable = os.access(path, os.W_OK)
    if writable:
        who = f"this OS user (uid {os.getuid()})"
        if os.getuid() == 0:
            who = "root (uid 0), whom file modes do not stop,"
        return Check(
            name=CheckName.CAN_WRITE,
            answer=True,
            value=f"yes: {who} can write the file",
            level="warning",
            meaning="acts-sql opens it read-only, but any program run as this user could "
            "change it; for shared data make the file read-only for this user (chmod a-w)",
        )
    return Check(
        name=CheckName.CAN_WRITE,
        answer=False,
        value=f"no: the file is read-only for this OS user (uid {os.getuid()})",
        level="ok",
        meaning="nothing run as this user can change the file",
    )


def _file_reads(session: Session) -> Check:
    if session.dialect == "sqlite":
        value = "no: no server; ATTACH and extension loading are refused on the connection"
    else:
        value = "no: no server; enable_external_access=false (no other files, no extensions)"
    return Check(name=CheckName.READS_FILES, answer=False, value=value, level="ok")


def _engine_read_only(session: Session) -> Check:
    if session.dialect == "sqlite":
        return Check(
            name=CheckName.ENGINE_READ_ONLY,
            answer=True,
            value="opened with mode=ro, and an authorizer that refuses ATTACH, VACUUM INTO and "
            "setting pragmas",
            level="ok",
            meaning="SQLite refuses every write to the file, whatever the guard lets through",
        )
    result = session.run_internal(DUCKDB_SETTINGS)
    if not result.ok or not result.rows:
        return unanswered(CheckName.ENGINE_READ_ONLY, result)
    access, external, locked = (str(v).lower() for v in result.rows[0])
    on = access == "read_only"
    return Check(
        name=CheckName.ENGINE_READ_ONLY,
        answer=on,
        value=f"access_mode={access}, enable_external_access={external}, "
        f"lock_configuration={locked}",
        level="ok" if on else "warning",
        meaning="DuckDB refuses every write to the file, whatever the guard lets through"
        if on
        else "the file is not opened read-only: only the guard stops writes",
    )


def _copy(path: Path, size: int) -> Check:
    temp = Path(tempfile.gettempdir())
    free = shutil.disk_usage(temp).free
    fits = os.access(temp, os.W_OK) and free > size
    return Check(
        name=CheckName.WRITABLE_COPY,
        answer=fits,
        value=f"yes: copied to a private folder in {temp} ({free // 2**20:,} MB free)"
        if fits
        else f"no: {temp} is not writable or has no room for {size:,} bytes",
        meaning="--allow-writes runs on the copy and deletes it after; the file is never "
        "opened for writing",
    )
