"""scripts/_env.sh's with_progress: a long quiet install step prints its elapsed time."""

from __future__ import annotations

import re
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
    done = run("with_progress 'building llama.cpp' bash -c 'sleep 3.5; echo built'")
    assert done.returncode == 0
    assert done.stdout == "built\n"
    # bash's SECONDS ticks in whole seconds and a busy machine delays the
    # 1 s sleeps, so the exact seconds printed vary; their form and order do not.
    seconds = []
    for line in done.stderr.splitlines():
        shown = re.fullmatch(r"  building llama\.cpp: 0m(\d\d)s elapsed", line)
        assert shown, line
        seconds.append(int(shown.group(1)))
    assert len(seconds) >= 2
    assert seconds == sorted(set(seconds))
    assert seconds[0] >= 1 and seconds[-1] <= 4


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_the_step_exit_status_is_returned() -> None:
    failed = run("with_progress quick bash -c 'exit 3' || echo \"status $?\"")
    assert failed.stdout == "status 3\n" and failed.stderr == ""
