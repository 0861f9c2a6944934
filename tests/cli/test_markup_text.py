"""Text that looks like rich markup is printed as it is, on every console output path.

A seeded random generator (hypothesis is not installed here) makes strings of
brackets, tags, backslashes and emoji codes. They go in as SQL cells and
column names, LLM reasons, file paths and task ids, through `fix`, `demo`,
`eval` / `bench` and `serve`; each run must end normally and show the string
verbatim. A last test holds the rule in the code: consoles come only from
`acts_sql.cli.console.make_console`.
"""

from __future__ import annotations

import ast
import io
import json
import random
import re
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from acts_sql.bench.candidates import CandidateLine
from acts_sql.bench.models import Status
from acts_sql.cli import demo as demo_module
from acts_sql.cli.app import app
from acts_sql.cli.bench import candidate_progress
from acts_sql.cli.console import make_console
from acts_sql.cli.demo import ModelProgressView, WorkingIndicator
from acts_sql.demo import demo_db_path
from acts_sql.llm.base import LLMRequest, LLMResponse, Message, Usage
from acts_sql.llm.models import ProgressEvent

runner = CliRunner()
WIDE = {"COLUMNS": "250"}
CLI_DIR = Path(__file__).resolve().parents[2] / "src" / "acts_sql" / "cli"
TOKENS = [
    "[", "]", "[/", "[/]", "[b]", "[/b]", "[/quote]", "[red]", "[link=x]", "[@click]",
    "[#fff]", "[bold red on blue]", "\\", "\\[", ":smile:", ":", "x", "ab", " ", "/", "=",
    "]]", "[[", "()", "…", "ü",
]  # fmt: skip


def bracket_texts(seed: int, count: int, *, path_safe: bool = False) -> list[str]:
    """`count` random strings of markup-like tokens, none blank (no quotes, tabs or newlines)."""
    rng = random.Random(seed)
    texts: list[str] = []
    while len(texts) < count:
        text = "".join(rng.choice(TOKENS) for _ in range(rng.randint(1, 7))).strip()
        if path_safe:
            text = text.replace("/", "").strip()
        if text and "[" in text and text not in texts:
            texts.append(text)
    return texts


def story(cell: str, column: str, reason: str) -> dict[str, list[str]]:
    """One generate_sql node: its SQL returns `cell` under `column`; the judge says `reason`."""
    plan = {"cursor": "n1", "nodes": [{"id": "n1", "tool": "generate_sql"}]}
    sql = f"SELECT '{cell}' AS \"{column}\""
    return {
        "plan": [json.dumps(plan)],
        "correct": ["```sql\nSELECT 1 AS x\n```"],
        "generate_sql": [json.dumps({"sql": sql, "rationale": reason})],
        "judge": [json.dumps({"reason": reason, "verdict": "accept", "group": "A"})],
    }


@pytest.mark.parametrize("seed", range(12))
def test_fix_shows_cells_columns_and_llm_reasons_verbatim(seed, tmp_path, demo_db):
    cell, column, reason = bracket_texts(seed, 3)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(story(cell, column, reason)))
    args = ["fix", "--db", demo_db, "--question", "q", "--sql", "SELECT 1 AS x"]
    result = runner.invoke(app, [*args, "--llm", f"scripted:{script}"], env=WIDE)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert f"│ {cell} " in out  # the final rows
    assert f"┃ {column} " in out  # their header
    assert f"why: {reason}" in out  # the tree
    assert f"chose A (g2): {reason}" in out  # the judgement line under the candidates


@pytest.mark.parametrize("seed", range(6))
def test_fix_errors_and_llm_failures_show_paths_verbatim(seed, tmp_path, demo_db):
    name, script_name = bracket_texts(100 + seed, 2, path_safe=True)
    missing = f"{tmp_path}/{name}/missing.db"
    result = runner.invoke(app, ["fix", "--db", missing, "--sql", "SELECT 1"], env=WIDE)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error:") and missing in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    # an LLM error quoting a path reaches the progress line and the verdict as data
    script = tmp_path / f"{script_name}.json"
    script.write_text("{}")
    args = ["fix", "--db", demo_db, "--sql", "SELECT 1", "--llm", f"scripted:{script}"]
    failed = runner.invoke(app, args, env=WIDE)
    assert failed.exit_code == 1, failed.output
    assert f"scripted LLM ({script})" in failed.stdout


@pytest.mark.parametrize("seed", range(3))
def test_demo_shows_its_database_path_verbatim(seed, tmp_path, monkeypatch):
    (name,) = bracket_texts(200 + seed, 1, path_safe=True)
    copy = tmp_path / name / "demo.sqlite"
    copy.parent.mkdir()
    copy.write_bytes(demo_db_path().read_bytes())
    monkeypatch.setattr(demo_module, "demo_db_path", lambda: copy)
    result = runner.invoke(app, ["demo", "--llm", "scripted", "--task", "figure3"], env=WIDE)
    assert result.exit_code == 0, result.output
    assert f"acts-sql demo on {copy}\n" in result.stdout
    assert "verdict: accepted" in result.stdout


class Echo:
    name = "echo"

    def complete(self, request: LLMRequest) -> LLMResponse:
        return LLMResponse(text="ok", usage=Usage(purpose=request.purpose))


def test_demo_model_progress_and_the_writing_spinner_take_any_text():
    out = make_console()
    out.file, out.width = io.StringIO(), 300
    for text in bracket_texts(300, 8):
        view = ModelProgressView(out)
        view(ProgressEvent(stage="assemble", message=text, done=1, total=2))
        view(ProgressEvent(stage="load", message=text))
        view(ProgressEvent(stage="install", message=text))
        spinner = WorkingIndicator(Echo(), out, label=text)
        request = LLMRequest(purpose="plan", messages=[Message(role="user", content="x")])
        assert spinner.complete(request).text == "ok"
        printed = out.file.getvalue()
        assert f"{text}\n" in printed and f"{text} (pip; may take a minute)" in printed


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.mark.parametrize("seed", range(3))
def test_eval_shows_its_paths_verbatim(seed, tmp_path):
    name, instance = bracket_texts(400 + seed, 2, path_safe=True)
    folder = tmp_path / name
    folder.mkdir()
    task = {
        "dialect": "SQLite",
        "version": "3",
        "instance_id": instance,
        "db_id": "pets",
        "query": "count",
        "issue_sql": ["SELECT 1"],
        "preprocess_sql": ["CREATE TABLE pets (id INTEGER)"],
        "clean_up_sql": [],
        "category": "Query",
    }
    test = (
        "def test_case(pred_sqls, sol_sqls, db_path, conn, conditions):\n"
        "    assert ex_base(pred_sqls, sol_sqls, db_path, conn, conditions) == 1\n"
    )
    tasks = write_jsonl(folder / "sqlite500.jsonl", [task])
    gt = write_jsonl(
        folder / "sqlite500_solutions.jsonl",
        [{"instance_id": instance, "sol_sql": ["SELECT 1"], "test_cases": [test]}],
    )
    preds = write_jsonl(
        folder / "preds.jsonl", [{"instance_id": instance, "pred_sqls": ["SELECT 1"]}]
    )
    out = folder / "out"
    args = ["eval", "bird-critic", "--tasks", str(tasks), "--gt", str(gt), "--preds", str(preds)]
    result = runner.invoke(app, [*args, "--out", str(out)], env=WIDE)
    assert result.exit_code == 0, result.output
    assert f"-> {out}/report.md" in result.stderr
    args[3] = str(folder / "none.jsonl")
    missing = runner.invoke(app, [*args, "--out", str(out)])
    assert missing.exit_code == 2 and str(folder / "none.jsonl") in missing.stderr


def test_bench_candidates_progress_lines_take_any_text():
    console = make_console()
    console.file, console.width = io.StringIO(), 300
    for instance, set_name in zip(bracket_texts(500, 6), bracket_texts(501, 6), strict=True):
        line = CandidateLine(
            instance_id=instance, set=set_name, dialect="SQLite", final_status=Status.PASSED
        )
        text = candidate_progress(line, 1, 2)
        console.print(text, soft_wrap=True)
        assert f"{set_name}/{instance}" in console.file.getvalue()


@pytest.mark.parametrize("seed", range(3))
def test_serve_errors_show_paths_and_config_text_verbatim(seed, tmp_path):
    (name,) = bracket_texts(600 + seed, 1, path_safe=True)
    folder = tmp_path / name
    folder.mkdir()
    missing = folder / "missing.toml"
    result = runner.invoke(app, ["serve", "--config", str(missing)], env=WIDE)
    assert result.exit_code == 2, result.output
    assert str(missing) in result.stderr and len(result.stderr.strip().splitlines()) == 1
    no_tokens = folder / "service.toml"
    no_tokens.write_text(
        f'[llm]\nspec = "scripted:x.json"\n\n[databases.demo]\nurl = "sqlite:///{demo_db_path()}"\n'
    )
    result = runner.invoke(
        app, ["serve", "--config", str(no_tokens)], env={**WIDE, "ACTS_SQL_TOKENS": ""}
    )
    assert result.exit_code == 2, result.output
    assert "set [auth] tokens" in result.stderr and str(no_tokens) in result.stderr


def calls_named(tree: ast.AST, name: str) -> list[ast.Call]:
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (getattr(node.func, "id", None) == name or getattr(node.func, "attr", None) == name)
    ]


@pytest.mark.parametrize("module", sorted(p.name for p in CLI_DIR.glob("*.py")))
def test_cli_code_never_hands_rich_a_string_to_read_as_markup(module):
    tree = ast.parse((CLI_DIR / module).read_text())
    if module != "console.py":  # every console is markup-free
        assert not calls_named(tree, "Console"), f"{module}: use make_console()"
    for call in calls_named(tree, "TextColumn"):  # progress columns read markup by default
        given = {k.arg: k.value for k in call.keywords}
        assert isinstance(given.get("markup"), ast.Constant) and given["markup"].value is False
    for call in calls_named(tree, "Panel"):  # a panel reads a string title as markup
        title = next((k.value for k in call.keywords if k.arg == "title"), None)
        assert title is None or not isinstance(title, ast.Constant | ast.JoinedStr), module
    docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
    literals = [
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and id(n) not in docstrings
    ]
    assert not [s for s in literals if isinstance(s, str) and re.search(r"\[/\w*\]", s)], module


def test_the_console_factory_prints_markup_and_emoji_codes_as_they_are():
    console = make_console()
    assert isinstance(console, Console)
    with console.capture() as captured:
        console.print("[b]x[/b] [/quote] :smile:")
    assert captured.get() == "[b]x[/b] [/quote] :smile:\n"
