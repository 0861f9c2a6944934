"""Test support: scripted backends that record their requests, demo scripts, the
repository's scripts as modules."""

from __future__ import annotations

import importlib.util
import json
import signal
import sqlite3
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from acts_sql.db.connect import open_database
from acts_sql.engine.events import EVENT_TYPES, StatementData, TraceEvent
from acts_sql.engine.options import CorrectionOptions
from acts_sql.engine.result import CorrectionResult
from acts_sql.engine.runner import run_correction
from acts_sql.llm.base import LLMRequest, LLMResponse
from acts_sql.llm.scripted import ScriptedBackend

DEMO_SCRIPTS = Path(__file__).resolve().parents[1] / "src" / "acts_sql" / "demo" / "scripts"
SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def load_script(name: str) -> ModuleType:
    """``scripts/<name>.py`` as a module (registered in ``sys.modules``: dataclasses and
    pydantic models look their module up there)."""
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class RecordingBackend:
    """Wraps a backend and keeps every request, to assert on prompts."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = f"recording({inner.name})"
        self.requests: list[LLMRequest] = []

    def complete(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        return self.inner.complete(request)

    def prompts(self, purpose: str) -> list[str]:
        return [
            "\n".join(m.content for m in r.messages) for r in self.requests if r.purpose == purpose
        ]


def demo_script(task_id: str) -> dict[str, list[str]]:
    return json.loads((DEMO_SCRIPTS / f"{task_id}.json").read_text())


def raw_reply(sql: str) -> str:
    """A raw rewrite's reply (the `correct` purpose): prose and one SQL block."""
    return f"The query should be:\n```sql\n{sql}\n```"


def generated_reply(sql: str) -> str:
    """A `generate_sql` reply."""
    return json.dumps({"sql": sql, "rationale": "scripted"})


def scripted(script: dict[str, list[Any]]) -> RecordingBackend:
    """A recording scripted backend; dict/list responses are JSON-encoded."""
    encoded = {
        purpose: [r if isinstance(r, str) else json.dumps(r) for r in replies]
        for purpose, replies in script.items()
    }
    return RecordingBackend(ScriptedBackend(encoded))


JUDGED_WRONG_SQL = (
    "SELECT r.room_id, r.name\nFROM rooms AS r\nJOIN bookings AS b ON b.room_id = r.room_id\n"
    "GROUP BY r.room_id, r.name\nHAVING COUNT(*) > 4\nORDER BY r.room_id"
)


def judge_story() -> dict[str, list[str]]:
    """Figure 3 with a wrong first branch that the JUDGE rejects.

    In the demo script the first branch's candidate returns the user's rows and
    the engine refuses it before any judge sees it. Here it returns other rows
    (rooms with more than four bookings), so the judge rejects it with a
    reason and a backtrack target, then accepts the second branch.
    """
    script = demo_script("figure3")
    first = json.loads(script["generate_sql"][0])
    script["generate_sql"][0] = json.dumps({**first, "sql": JUDGED_WRONG_SQL})
    reject = {
        "reason": "this lists every room with many bookings, even when the bookings are hours "
        "apart; 'overlapping' means the time ranges intersect",
        "verdict": "reject",
        "group": None,
        "backtrack_to": "n1",
        "new_nodes": [],
    }
    script["judge"] = [json.dumps(reject), *script["judge"]]
    return script


def syntax_repair_story(db: str, task: Any) -> CorrectionResult:
    """Section 5.4 (`task`) without deterministic repairs: the pool whose candidate does not
    parse goes to split_fix_syntax (node n1.2.fix)."""
    executor = open_database(db)
    try:
        return run_correction(
            executor=executor,
            llm=scripted(demo_script("case_5_4")),
            question=task.question,
            sql=task.sql,
            options=CorrectionOptions(rule_candidates=False),
        )
    finally:
        executor.close()


def duckdb_table(path: Path, create: str, rows: list[tuple[Any, ...]]) -> str:
    """A DuckDB file at `path` with one table (`create`, then `rows`); its URL."""
    import duckdb

    marks = ", ".join("?" for _ in rows[0])
    table = create.split()[2]
    with duckdb.connect(str(path)) as conn:
        conn.execute(create)
        conn.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)
    return f"duckdb:///{path}"


def without(value: Any, keys: set[str]) -> Any:
    """`value` (JSON-like) with every dict entry under one of `keys` left out, at any depth:
    the timings of a result, to compare what two runs decided."""
    if isinstance(value, dict):
        return {k: without(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [without(v, keys) for v in value]
    return value


def sigint_as_default() -> None:
    """`preexec_fn` of a child a test sends SIGINT to: a test run started in the background
    (nohup, `cmd &` in a script) ignores SIGINT, the child would inherit that, and Python
    installs no KeyboardInterrupt handler for a signal ignored at its start."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def statement_event(seq: int) -> TraceEvent:
    """A trace event, for tests where any event will do."""
    data = StatementData(
        sql="SELECT 1", status="ok", row_count=1, truncated=False, error=None, seconds=0.0
    )
    return EVENT_TYPES[StatementData](seq=seq, t=0.0, data=data)


def users_db(tmp_path: Path) -> str:
    """A SQLite file with users(id, name): ann and bob."""
    path = tmp_path / "app.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
        conn.executemany("INSERT INTO users VALUES (?, ?)", [(1, "ann"), (2, "bob")])
    return str(path)
