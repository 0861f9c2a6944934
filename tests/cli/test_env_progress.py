"""scripts/_env.sh's with_progress: a long quiet install step prints its elapsed time."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ENV_SH = Path(__file__).resolve().parents[2] / "scripts" / "_env.sh"


def run(command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", f"source {ENV_SH}; {command}"],
        capture_output=True,
        text=True,
        timeout=30,
        env={"PATH": "/usr/bin:/bin", "ACTS_SQL_PROGRESS_EVERY": "1"},
    )


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_a_long_step_prints_its_elapsed_time_and_keeps_its_output() -> None:
    done = run("with_progress 'building llama.cpp' bash -c 'sleep 2.5; echo built'")
    assert done.returncode == 0
    assert done.stdout == "built\n"
    lines = done.stderr.splitlines()
    assert lines[:2] == [
        "  building llama.cpp: 0m01s elapsed",
        "  building llama.cpp: 0m02s elapsed",
    ]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_the_step_exit_status_is_returned() -> None:
    failed = run("with_progress quick bash -c 'exit 3' || echo \"status $?\"")
    assert failed.stdout == "status 3\n" and failed.stderr == ""
