"""Batch inputs for the tests: the demo database, the Figure 3 script, varied tasks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acts_sql.demo import demo_db_path, load_tasks
from support import without

SCRIPT = Path(__file__).resolve().parents[1] / "src/acts_sql/demo/scripts/figure3.json"
VOLATILE = {"seconds", "llm_seconds", "worker", "t", "timeout_s"}


def twelve_lines(folder: Path) -> tuple[Path, Path]:
    """tasks.jsonl (10 tasks, a bad line at 4 and at 9) and the --databases file naming the
    demo database. The tasks differ: the Figure 3 issue, its right SQL (the script's judge
    then accepts the other reading), no SQL (text-to-SQL mode)."""
    demo = demo_db_path()
    figure3 = next(t for t in load_tasks() if t.id == "figure3")
    kinds = [
        {"question": figure3.question, "sql": figure3.sql},
        {"question": figure3.question, "sql": figure3.right_sql, "dialect": "sqlite"},
        {"question": figure3.question},
    ]
    lines = []
    for n in range(10):
        database = "demo" if n % 2 else f"sqlite:///{demo}"
        lines.append(json.dumps({"id": f"task-{n}", "database": database, **kinds[n % 3]}))
    lines.insert(3, '{"id": "broken", "database": ')
    lines.insert(8, json.dumps({"id": "no-database", "question": "which rooms?"}))
    tasks = folder / "tasks.jsonl"
    tasks.write_text("\n".join(lines) + "\n", encoding="utf-8")
    databases = folder / "databases.toml"
    databases.write_text(f'[databases]\ndemo = "sqlite:///{demo}"\n', encoding="utf-8")
    return tasks, databases


def results(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def _strip(value: Any) -> Any:
    return without(value, VOLATILE)


def decided(out: Path) -> dict[str, Any]:
    """Each task's record and result, by id, without timings and the worker's name; the
    statement events apart (a pool's run in a background thread: where they fall among
    the other events depends on timing)."""
    found = {}
    for record in results(out):
        result = json.loads((out / record["trace_file"]).read_text())
        events = [
            {**e, "summary": ""} if e["kind"] in ("statement", "llm_call") else e
            for e in _strip(result.pop("trace"))
        ]
        found[record["id"]] = {
            "record": _strip(record),
            "result": _strip(result),
            "events": [e for e in events if e["kind"] != "statement"],
            "statements": [e for e in events if e["kind"] == "statement"],
        }
    return found
