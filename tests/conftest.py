"""Shared fixtures (the demo database and its tasks, a Ray cluster), and how pytest-xdist
groups the test files (`worker_groups`)."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from acts_sql.demo import demo_db_path, load_tasks
from worker_groups import file_group_scheduling


@pytest.hookimpl(optionalhook=True)  # defined by pytest-xdist
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """With ``--dist loadfile``: the files that share a server or Ray on one worker."""
    if config.getvalue("dist") != "loadfile":
        return None
    return file_group_scheduling(config, log)


@pytest.fixture
def demo_db() -> str:
    return f"sqlite:///{demo_db_path()}"


@pytest.fixture
def demo_tasks() -> dict[str, Any]:
    return {t.id: t for t in load_tasks()}


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[Any]:
    """A local Ray cluster of 2 CPUs for the session's Ray tests, stopped at the end (with
    every process it started). Its workers import the tests' helper modules too."""
    ray = pytest.importorskip(
        "ray", reason="Ray is not installed: pip install 'acts-sql[ray]' (the dev extra has it)"
    )
    tests = Path(__file__).resolve().parent
    paths = [str(tests), str(tests.parent / "src"), os.environ.get("PYTHONPATH", "")]
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    try:
        ray.init(
            num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR
        )
    finally:
        if before is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = before
    try:
        yield ray
    finally:
        started = {
            pid: command for pid, command in _descendants(os.getpid()).items() if "ray" in command
        }
        ray.shutdown()
    left = _still_running(started)
    assert not left, f"Ray left processes behind: {left}"


def _parents() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, command line) of every process."""
    found = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
            command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        found[int(proc.name)] = (parent, command)
    return found


def _descendants(root: int) -> dict[int, str]:
    """The processes started by `root`, and theirs: pid -> command line."""
    table = _parents()
    found: dict[int, str] = {}
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        for pid, (ppid, command) in table.items():
            if ppid == parent and pid not in found:
                found[pid] = command
                frontier.append(pid)
    return found


def _still_running(processes: dict[int, str], wait_s: float = 20.0) -> list[str]:
    """Those of `processes` still alive (same command line) after up to `wait_s`."""
    deadline = time.monotonic() + wait_s
    while True:
        table = _parents()
        left = [
            f"{pid}: {command[:100]}"
            for pid, command in processes.items()
            if pid in table and table[pid][1] == command and "<defunct>" not in command
        ]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.5)
