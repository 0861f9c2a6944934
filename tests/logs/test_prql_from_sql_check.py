"""scripts/prql_from_sql_check.py: the gold queries read back, and a run's SQL answers."""

from __future__ import annotations

import json

from acts_sql.bench.logs.tasks import select_tasks
from support import load_script


def _script():
    return load_script("prql_from_sql_check")


def test_counts_sql_answers_and_their_rewrites(tmp_path, small_logs, capsys):
    [l01] = select_tasks(["L01"])
    records = [
        {"id": "L01", "initial_query": "select count(*) from requests where status = 404",
         "final_query": l01.gold},  # PRQL already: not SQL to read back
        {"id": "L02", "initial_query": "select count(*) from requests where status = 1",
         "final_query": "select nope from requests"},
    ]  # fmt: skip
    path = tmp_path / "records-raw.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))

    assert _script().main([str(path), "--db", str(small_logs.path), "--json"]) == 0

    rows = {r["set"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    gold = rows["gold PRQL compiled to SQL"]
    assert gold["queries"] == gold["sql"] == gold["sql_right"] == 60
    assert gold["right"] == gold["same_rows"] == gold["run"] >= 45
    first = rows["records-raw.jsonl initial_query"]
    assert (first["sql"], first["sql_right"], first["rewritten"], first["run"]) == (2, 1, 2, 2)
    assert (first["same_rows"], first["right"]) == (2, 1)
    final = rows["records-raw.jsonl final_query"]
    assert (final["queries"], final["sql"], final["rewritten"], final["run"]) == (2, 1, 1, 0)
