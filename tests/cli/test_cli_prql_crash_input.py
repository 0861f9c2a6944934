"""`acts-sql fix --language prql` on the text that made prqlc segfault (issue 37, row 8).

``from customers | select {x = `` + 1,000 nested parentheses killed the process
(exit -11) on every engine. Now it is a compile error with its place; the run ends
with exit 1 (no candidate accepted: the scripted model answers SQL, which does not
compile as PRQL), not a signal. A real child process, so that
a crash is an exit code here, not the end of pytest.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

ACTS_SQL = str(Path(sys.executable).parent / "acts-sql")
CRASH_INPUT = "from customers | select {x = " + "(" * 1000 + "1" + ")" * 1000 + "}"
MESSAGE = "brackets nested 1001 deep; at most 128"


def make_db(engine: str, folder: Path) -> str:
    """A database with a customers table; its URL."""
    path = folder / f"shop.{engine}"
    create = "CREATE TABLE customers (id INTEGER, name VARCHAR(20))"
    insert = "INSERT INTO customers VALUES (1, 'Ana')"
    if engine == "duckdb":
        with duckdb.connect(str(path)) as conn:
            conn.execute(create)
            conn.execute(insert)
    else:
        with sqlite3.connect(path) as conn:
            conn.execute(create)
            conn.execute(insert)
    return f"{engine}:///{path}"


@pytest.mark.parametrize("engine", ["duckdb", "sqlite"])
def test_fix_on_the_crash_input_exits_1_with_the_limit(engine: str, tmp_path: Path) -> None:
    url = make_db(engine, tmp_path)
    query = tmp_path / "query.prql"
    query.write_text(CRASH_INPUT)
    script = tmp_path / "S.json"
    script.write_text(json.dumps({"correct": ["```sql\nSELECT 1\n```"]}))  # the S
    args = ["fix", "--db", url, "--language", "prql", "--llm", f"scripted:{script}"]
    args += ["--method", "raw", "--question", "q", "--sql-file", str(query), "--json"]
    done = subprocess.run(
        [ACTS_SQL, *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.returncode in (1, 2), (done.returncode, done.stderr[-2000:])
    result = json.loads(done.stdout)
    initial = [e for e in result["trace"] if e["purpose"] == "original" and MESSAGE in str(e)]
    assert initial, "the user's text must come back as a compile error naming the limit"
    assert f"line 1, column 157: {MESSAGE}" in str(initial[0])
    assert result["accepted"] is False  # the user's own text is never accepted back
