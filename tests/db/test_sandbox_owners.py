"""Copy names carry their owner (pid, start time, host); leftovers of dead owners are swept.

Server copies are swept in tests/integration/test_sandbox_safety.py; here the
names, the owner check and the temp-folder sweep, without a server.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from acts_sql.db import sandbox
from acts_sql.db.sandbox import (
    FileCopy,
    copy_name,
    copy_owner,
    current_owner,
    dir_prefix,
    host_tag,
    is_orphan,
    process_start,
    sweep_temp_dir,
)


def dead_pid() -> int:
    """The pid of a process that has ended (spawned and reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def other_host() -> str:
    return "000000" if host_tag() != "000000" else "111111"


def test_names_carry_pid_start_time_and_host() -> None:
    me = current_owner()
    assert me.pid == os.getpid() and me.start == process_start(os.getpid()) and me.start > 0
    name = copy_name()
    assert name.startswith(f"acts_sandbox_{me.pid}_{me.start}_{me.host}_")
    assert len(name) <= 63  # PostgreSQL's identifier limit
    assert copy_owner(name) == me and not is_orphan(name)
    assert copy_owner(dir_prefix() + "ab12cd_9") == me
    for other in ("acts_sandbox_12_ab12cd34", "acts_sandbox_1_2_zzzzzz_ab12cd34", "orders"):
        assert copy_owner(other) is None and not is_orphan(other)


def test_an_owner_is_gone_when_its_pid_is_gone_or_reused() -> None:
    me, dead = current_owner(), dead_pid()
    assert process_start(dead) is None
    assert is_orphan(f"acts_sandbox_{dead}_{me.start}_{me.host}_0123abcd")
    # the pid runs, but a process started at another time: a recycled pid, not the owner
    assert is_orphan(f"acts_sandbox_{me.pid}_{me.start + 1}_{me.host}_0123abcd")
    # made on another host: never judged from here
    assert not is_orphan(f"acts_sandbox_{dead}_{me.start}_{other_host()}_0123abcd")


def test_sweep_removes_only_folders_whose_owner_is_gone(tmp_path: Path) -> None:
    me, dead = current_owner(), dead_pid()
    names = {
        "dead": f"acts-sql-sandbox-{dead}-{me.start}-{me.host}-x1y2z3w4",
        "recycled": f"acts-sql-sandbox-{me.pid}-{me.start + 7}-{me.host}-x1y2z3w4",
        "live": dir_prefix() + "x1y2z3w4",
        "other_host": f"acts-sql-sandbox-{dead}-{me.start}-{other_host()}-x1y2z3w4",
        "old_format": f"acts-sql-sandbox-{dead}-x1y2z3w4",
        "unrelated": "acts-sql-something-else",
    }
    for name in names.values():
        (tmp_path / name).mkdir()
        (tmp_path / name / "shop.db").write_bytes(b"x")
    removed = sweep_temp_dir(tmp_path)
    assert sorted(p.name for p in removed) == sorted([names["dead"], names["recycled"]])
    left = {p.name for p in tmp_path.iterdir()}
    assert left == {names[k] for k in ("live", "other_host", "old_format", "unrelated")}


def test_a_file_copy_is_named_for_its_owner_and_sweeps_first(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(sandbox.tempfile, "tempdir", str(tmp_path))
    me, dead = current_owner(), dead_pid()
    leftover = tmp_path / f"acts-sql-sandbox-{dead}-{me.start}-{me.host}-leftover"
    leftover.mkdir()
    source = tmp_path / "shop.db"
    source.write_bytes(b"data")
    copy = FileCopy(source)
    try:
        assert copy.dir.name.startswith(dir_prefix()) and copy.path.read_bytes() == b"data"
        assert not leftover.exists()
    finally:
        copy.drop()
    assert not copy.dir.exists()
