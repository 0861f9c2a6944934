"""`fix --ask`: the readings at the terminal, the choice read back; no terminal, no asking."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from acts_sql.cli import ask as ask_module
from acts_sql.cli.app import app
from acts_sql.cli.ask import terminal_asker
from acts_sql.engine.choice import ChoiceQuestion, ReadingOption
from engine.test_ask_person import FIRST, SECOND, script

runner = CliRunner()
QUESTION = ChoiceQuestion(
    question="Which rooms have overlapping bookings?",
    readings=[
        ReadingOption(
            id="n1.1",
            reading="read it as A",
            sql=FIRST,
            columns=["room_id"],
            rows=[[1], [2]],
            row_count=2,
        ),
        ReadingOption(
            id="n1.2",
            reading="read it as B",
            sql=SECOND,
            columns=["room_id"],
            rows=[[3]],
            row_count=9,
        ),
    ],
)


@pytest.mark.parametrize(
    ("typed", "chosen"),
    [("2\n", "n1.2"), ("1", "n1.1"), ("\n", None), ("7\n", None), ("b\n", None), (None, None)],
)
def test_the_terminal_asker_shows_each_reading_and_reads_a_number(typed, chosen):
    console = Console(record=True, width=120)
    waited: list[float] = []

    def read(timeout: float) -> str | None:
        waited.append(timeout)
        return typed

    assert terminal_asker(console, read)(QUESTION, 42.0) == chosen
    shown = console.export_text()
    assert "1. read it as A" in shown and "2. read it as B" in shown
    assert FIRST in shown and SECOND in shown and "..." in shown  # 1 of 9 rows shown
    assert "42 s left" in shown and waited == [42.0]


def args(demo_db: str, demo_tasks: Any, tmp_path) -> list[str]:
    task = demo_tasks["figure3"]
    path = tmp_path / "script.json"
    replies = {
        k: [r if isinstance(r, str) else json.dumps(r) for r in v]
        for k, v in script(task.sql).items()
    }
    path.write_text(json.dumps(replies))
    return [
        "fix",
        "--db",
        demo_db,
        "--question",
        task.question,
        "--sql",
        task.sql,
        "--llm",
        f"scripted:{path}",
        "--candidates",
        "1",
        "--no-scaled-budget",
        "--json",
    ]


def test_fix_ask_without_a_terminal_is_bad_input(demo_db, demo_tasks, tmp_path):
    result = runner.invoke(app, [*args(demo_db, demo_tasks, tmp_path), "--ask"])
    assert result.exit_code == 2
    assert "--ask needs a terminal" in result.output


def test_fix_ask_returns_the_reading_typed(demo_db, demo_tasks, tmp_path, monkeypatch):
    monkeypatch.setattr(ask_module, "require_terminal", lambda: None)
    monkeypatch.setattr(ask_module, "read_line", lambda timeout: "2\n")
    result = runner.invoke(app, [*args(demo_db, demo_tasks, tmp_path), "--ask"])

    assert result.exit_code == 1, result.output  # returned, not accepted
    assert json.loads(result.stdout)["sql"] == SECOND
    assert "the person chose reading n1.2" in json.loads(result.stdout)["reason"]
