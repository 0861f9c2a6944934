"""scripts/_env.sh builds a patched llama-cpp-python once (exact small batches) and reuses it."""

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
# records its arguments (and CMAKE_ARGS); `pip download -d DIR` leaves an sdist in DIR,
# `pip wheel -w DIR` a wheel
echo "CMAKE_ARGS=${CMAKE_ARGS:-} $*" >> "$LOG"
for ((i = 1; i <= $#; i++)); do
  j=$((i + 1))
  if [ "$3" = download ] && [ "${!i}" = -d ]; then
    mkdir -p "${!j}/llama_cpp_python-$VERSION"
    tar czf "${!j}/llama_cpp_python-$VERSION.tar.gz" -C "${!j}" "llama_cpp_python-$VERSION"
    rm -r "${!j}/llama_cpp_python-$VERSION"
  fi
  if [ "$3" = wheel ] && [ "${!i}" = -w ]; then
    [ -z "${FAIL_WHEEL:-}" ] || exit 1
    touch "${!j}/llama_cpp_python-$VERSION-cp311-linux.whl"
  fi
done
"""


def run(command: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", f"source {ENV_SH}; {command}"],
        capture_output=True,
        text=True,
        timeout=30,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **env},
    )


def test_the_wheel_folder_is_named_by_the_cpu_and_the_build(tmp_path: Path) -> None:
    cache = tmp_path / "wheels"

    def folder(command: str = "llama_wheel_dir", **env: str) -> str:
        return run(command, tmp_path, ACTS_SQL_WHEEL_CACHE=str(cache), **env).stdout.strip()

    first = folder()
    assert first == folder() and first.startswith(f"{cache}/llama-")
    # another build is another wheel: other args, another patch, no patch
    assert folder("LLAMA_CMAKE_ARGS=-DGGML_LLAMAFILE=OFF; llama_wheel_dir") != first
    assert folder("LLAMA_PATCH=4; llama_wheel_dir") != first
    assert folder(ACTS_SQL_LLAMA_PATCH="") != first
    assert run('echo "[$LLAMA_CMAKE_ARGS] [$LLAMA_PATCH]"', tmp_path).stdout.strip() == "[] [8]"


def install_fake_python(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    log = tmp_path / "calls.log"
    env = {"ACTS_SQL_WHEEL_CACHE": str(tmp_path / "wheels"), "LOG": str(log), "VERSION": VERSION}
    return venv, env


def test_the_sdist_is_patched_and_built_once_then_only_installed(tmp_path: Path) -> None:
    venv, env = install_fake_python(tmp_path)
    log = Path(env["LOG"])
    command = f"VENV={venv}; ensure_llama_wheel"
    built = run(command, tmp_path, **env)
    assert built.returncode == 0, built.stderr
    assert f"building llama-cpp-python {VERSION}" in built.stderr
    calls = log.read_text().splitlines()
    assert len(calls) == 4
    download, patched, wheel, install = calls
    assert " -m pip download " in download and "--no-binary :all:" in download
    assert f"llama-cpp-python=={VERSION}" in download
    assert patched.endswith(f"llama_cpp_python-{VERSION} --min-rows 8")
    assert "scripts/patch_llama_source.py" in patched
    assert wheel.startswith("CMAKE_ARGS= -m pip wheel") and "--no-cache-dir" in wheel
    assert wheel.endswith(f"/llama_cpp_python-{VERSION}")  # the unpacked, patched sdist
    assert " -m pip install " in install and install.endswith("-cp311-linux.whl")
    log.unlink()
    reused = run(command, tmp_path, **env)
    assert reused.returncode == 0 and "building" not in reused.stderr
    calls = log.read_text().splitlines()
    assert len(calls) == 1 and " -m pip install " in calls[0]  # no second build


def test_without_the_patch_the_sdist_is_built_as_published(tmp_path: Path) -> None:
    venv, env = install_fake_python(tmp_path)
    built = run(
        f"VENV={venv}; ensure_llama_wheel",
        tmp_path,
        ACTS_SQL_LLAMA_PATCH="",
        ACTS_SQL_LLAMA_CMAKE_ARGS="-DGGML_LLAMAFILE=OFF",
        **env,
    )
    assert built.returncode == 0, built.stderr
    calls = Path(env["LOG"]).read_text().splitlines()
    assert not any("patch_llama_source" in call for call in calls)
    assert next(c for c in calls if " pip wheel " in c).startswith(
        "CMAKE_ARGS=-DGGML_LLAMAFILE=OFF -m pip wheel"
    )


def test_a_failed_build_stops_and_leaves_no_sources_behind(tmp_path: Path) -> None:
    venv, env = install_fake_python(tmp_path)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    failed = run(
        f"VENV={venv}; ensure_llama_wheel; echo went-on",
        tmp_path,
        FAIL_WHEEL="1",
        TMPDIR=str(scratch),
        **env,
    )
    assert failed.returncode != 0 and "went-on" not in failed.stdout
    assert list(scratch.iterdir()) == []  # the unpacked sdist is gone
    assert not list((tmp_path / "wheels").glob("*/*.whl"))  # and no wheel to reuse
