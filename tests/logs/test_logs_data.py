"""The log database generator and the 60 tasks: deterministic data, verified gold queries."""

from __future__ import annotations

from collections import Counter

import duckdb

from acts_sql.bench.logs.generator import LogSize, checksum, generate
from acts_sql.bench.logs.tasks import (
    SMALL_CHECKSUM,
    gold_results,
    load_tasks,
    select_tasks,
    stored_gold_small,
)


def test_the_same_seed_gives_the_same_checksum(small_logs, tmp_path):
    again = generate(tmp_path / "again.duckdb", LogSize.SMALL, seed=16)
    assert again.checksum == small_logs.checksum == SMALL_CHECKSUM
    assert checksum(again.path) == again.checksum  # the checksum reads the file
    other = generate(tmp_path / "other.duckdb", LogSize.SMALL, seed=17)
    assert other.checksum != again.checksum


def test_the_small_database_holds_what_the_tasks_ask_about(small_logs):
    assert small_logs.rows["requests"] == LogSize.SMALL.requests == 20_000
    assert small_logs.rows["services"] == 12 and small_logs.rows["deployments"] == 120
    with duckdb.connect(str(small_logs.path), read_only=True) as conn:
        statuses = dict(
            conn.execute("SELECT status, count(*) FROM deployments GROUP BY 1").fetchall()
        )
        assert set(statuses) == {"succeeded", "failed", "rolled_back"}
        five_xx = conn.execute("SELECT count(*) FROM requests WHERE status >= 500").fetchone()
        errors = conn.execute("SELECT count(*) FROM errors").fetchone()
        assert five_xx == errors and errors[0] > 100  # one error row per server error
        span = conn.execute("SELECT min(ts) >= '2025-03-01', max(ts) < '2025-03-15' FROM requests")
        assert span.fetchone() == (True, True)
        no_user = conn.execute(
            "SELECT count(*) FROM requests "
            "WHERE user_id IS NULL AND user_agent LIKE 'Mozilla/5.0 (W%'"
        ).fetchone()
        assert no_user == (0,)  # people have users; bots and probes do not


def test_sixty_tasks_cover_every_category():
    tasks = load_tasks()
    assert len(tasks) == 60 and [t.id for t in tasks] == [f"L{i:02d}" for i in range(1, 61)]
    counts = Counter(t.category for t in tasks)
    assert set(counts) == {
        "filter",
        "time_bucket",
        "top_k",
        "percentile",
        "join",
        "window",
        "ambiguous",
    }
    assert min(counts.values()) >= 7
    assert all(t.ambiguity for t in tasks if t.category == "ambiguous")
    assert select_tasks(["L03", "L01"])[0].id == "L03"


def test_the_gold_queries_reproduce_the_stored_gold_results(small_logs, prql_logs):
    assert small_logs.checksum == SMALL_CHECKSUM
    computed = gold_results(prql_logs, list(load_tasks()))
    stored = stored_gold_small()
    assert set(computed) == set(stored)
    for task_id, gold in stored.items():
        assert computed[task_id] == gold, task_id
        assert gold.rows, f"{task_id}: an empty gold result says nothing"


def test_ambiguous_readings_differ_from_the_naive_ones(prql_logs):
    """The ambiguity is real: the naive reading returns another answer than the gold."""
    gold = stored_gold_small()
    naive = {
        "L53": 'from r = requests\njoin s = services (==service_id)\nfilter s.name == "payments" '
        "&& r.status >= 400\naggregate {n = count this}",
        "L54": 'from requests\nfilter region == "Europe"\naggregate {n = count this}',
        "L55": 'from requests\nfilter (user_agent | text.contains "Mobile")\n'
        "aggregate {n = count this}",
        "L59": "from requests\nfilter ts >= @2025-03-10 && ts < @2025-03-11\n"
        "aggregate {n = count this}",
    }
    for task_id, text in naive.items():
        result = prql_logs.execute(text)
        assert result.ok, result.error
        assert [[f"n:{float(result.rows[0][0])!r}"]] != gold[task_id].rows, task_id
