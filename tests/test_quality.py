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


MAX_FUNCTION_LINES = 60


def long_functions(root: Path) -> list[str]:
    """Functions of the .py files under `root` longer than MAX_FUNCTION_LINES (def line to
    last line), as "path:line name (N lines)"."""
    import ast

    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    where = path.relative_to(root.parent)
                    found.append(f"{where}:{node.lineno} {node.name} ({length} lines)")
    return found


def test_no_function_in_src_is_longer_than_60_lines():
    assert long_functions(ROOT / "src") == []


def test_the_long_function_check_finds_a_long_function(tmp_path: Path):
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(f"def short():\n    pass\n\n\ndef long():\n{body}")
    assert long_functions(tmp_path / "pkg") == [f"pkg/m.py:5 long ({MAX_FUNCTION_LINES + 1} lines)"]


def import_circles(package: str) -> list[list[str]]:
    """The import circles among `package`'s modules (strongly connected groups of more than
    one module, function-level imports included), each sorted."""
    import grimp

    graph = grimp.build_graph(package)
    edges = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(module: str) -> None:  # Tarjan's strongly connected components
        order[module] = low[module] = len(order)
        stack.append(module)
        for imported in edges[module]:
            if imported not in order:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], order[imported])
        if low[module] == order[module]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for module in sorted(graph.modules):
        if module not in order:
            visit(module)
    return circles


def test_no_import_circle_in_src():
    assert import_circles("acts_sql") == []


def test_the_circle_check_finds_a_circle(tmp_path: Path, monkeypatch):
    package = tmp_path / "circled"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from circled import b\n")
    (package / "b.py").write_text("def f():\n    from circled import a\n")
    (package / "c.py").write_text("from circled import a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert import_circles("circled") == [["circled.a", "circled.b"]]
