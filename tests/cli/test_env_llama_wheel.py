"""scripts/_env.sh builds llama-cpp-python once without llamafile's kernels and reuses it."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENV_SH = ROOT / "scripts" / "_env.sh"
PINNED = re.search(r"llama-cpp-python==([0-9.]+)", (ROOT / "pyproject.toml").read_text())
VERSION = PINNED.group(1) if PINNED else "missing"

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")

FAKE_PYTHON = """#!/usr/bin/env bash
# records its arguments (and CMAKE_ARGS); `pip wheel -w DIR` leaves a wheel in DIR
echo "CMAKE_ARGS=${CMAKE_ARGS:-} $*" >> "$LOG"
if [ "$3" = wheel ]; then
  for ((i = 1; i <= $#; i++)); do
    if [ "${!i}" = -w ]; then
      j=$((i + 1))
      touch "${!j}/llama_cpp_python-$VERSION-cp311-linux.whl"
    fi
  done
fi
"""


def run(command: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", f"source {ENV_SH}; {command}"],
        capture_output=True,
        text=True,
        timeout=30,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **env},
    )


def test_the_wheel_folder_is_named_by_the_cpu_and_the_build_args(tmp_path: Path) -> None:
    cache = tmp_path / "wheels"
    first = run("llama_wheel_dir", tmp_path, ACTS_SQL_WHEEL_CACHE=str(cache)).stdout.strip()
    again = run("llama_wheel_dir", tmp_path, ACTS_SQL_WHEEL_CACHE=str(cache)).stdout.strip()
    other = run(
        "LLAMA_CMAKE_ARGS=-DGGML_LLAMAFILE=ON; llama_wheel_dir",
        tmp_path,
        ACTS_SQL_WHEEL_CACHE=str(cache),
    ).stdout.strip()
    assert first == again and first.startswith(f"{cache}/llama-")
    assert other != first  # another build is another wheel
    assert run("echo $LLAMA_CMAKE_ARGS", tmp_path).stdout.strip() == "-DGGML_LLAMAFILE=OFF"
    defaults = run('echo "[$LLAMA_CMAKE_ARGS]"', tmp_path, ACTS_SQL_LLAMA_CMAKE_ARGS="")
    assert defaults.stdout.strip() == "[]"  # llama.cpp's own defaults, asked for


def test_the_wheel_is_built_once_with_the_args_then_only_installed(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    log = tmp_path / "calls.log"
    env = {"ACTS_SQL_WHEEL_CACHE": str(tmp_path / "wheels"), "LOG": str(log), "VERSION": VERSION}
    command = f"VENV={venv}; ensure_llama_wheel"
    built = run(command, tmp_path, **env)
    assert built.returncode == 0, built.stderr
    assert f"building llama-cpp-python {VERSION}" in built.stderr
    calls = log.read_text().splitlines()
    assert len(calls) == 2
    assert calls[0].startswith("CMAKE_ARGS=-DGGML_LLAMAFILE=OFF -m pip wheel")
    assert "--no-binary llama-cpp-python" in calls[0] and "--no-cache-dir" in calls[0]
    assert f"llama-cpp-python=={VERSION}" in calls[0]
    assert " -m pip install " in calls[1] and calls[1].endswith("-cp311-linux.whl")
    log.unlink()
    reused = run(command, tmp_path, **env)
    assert reused.returncode == 0 and "building" not in reused.stderr
    calls = log.read_text().splitlines()
    assert len(calls) == 1 and " -m pip install " in calls[0]  # no second build
