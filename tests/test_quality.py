"""Lint and the layer contracts run as part of the tests."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def tool(name: str) -> str:
    found = BIN / name
    return str(found) if found.exists() else (shutil.which(name) or name)


def run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_ruff_lint_is_clean():
    proc = run(tool("ruff"), "check", "src", "tests", "scripts")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_format_is_clean():
    proc = run(tool("ruff"), "format", "--check", "src", "tests", "scripts")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_import_layers_hold():
    proc = run(tool("lint-imports"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 broken" in proc.stdout


def test_mypy_is_clean():
    proc = run(tool("mypy"), "src")
    assert proc.returncode == 0, proc.stdout + proc.stderr
