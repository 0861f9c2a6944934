"""Loading task, solution and prediction files; joining them per set."""

from __future__ import annotations

import json

import pytest

from acts_sql.bench.errors import BenchDataError
from acts_sql.bench.evaluability import check_statements
from acts_sql.bench.evaluate import predictions_for
from acts_sql.bench.loader import (
    canonical_set,
    join,
    load_dev_ids,
    load_predictions,
    load_solutions,
    load_tasks,
)
from acts_sql.bench.models import Prediction, split_sql_field
from acts_sql.bench.selection import TaskFilter


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def task_record(instance_id, dialect="PostgreSQL", **extra):
    return {
        "dialect": dialect,
        "version": "14",
        "instance_id": instance_id,
        "db_id": "shop",
        "query": "why?",
        "issue_sql": ["SELECT 1"],
        "preprocess_sql": [],
        "clean_up_sql": [],
        "category": "Query",
        **extra,
    }


@pytest.fixture
def two_sets(tmp_path):
    tasks, dev = tmp_path / "tasks", tmp_path / "dev"
    tasks.mkdir()
    dev.mkdir()
    write_jsonl(
        tasks / "open570.jsonl",
        [task_record("PostgreSQL_5"), task_record("MySQL_1", dialect="MySQL")],
    )
    write_jsonl(tasks / "pg530.jsonl", [task_record("PostgreSQL_5", category="Management")])
    write_jsonl(
        dev / "open570_solutions.jsonl",
        [{"instance_id": "PostgreSQL_5", "sol_sql": ["SELECT 'open'"], "test_cases": []}],
    )
    write_jsonl(
        dev / "pg530_solutions.jsonl",
        [{"instance_id": "PostgreSQL_5", "sol_sql": ["SELECT 'pg'"], "test_cases": ["x"]}],
    )
    (dev / "ids.tsv").write_text(
        "set\tinstance_id\tdialect\tcategory\n"
        "open570\tPostgreSQL_5\tPostgreSQL\tQuery\npg530\tPostgreSQL_5\tPostgreSQL\tManagement\n"
    )
    return tmp_path


def test_same_id_in_two_sets_are_two_tasks_with_their_own_solutions(two_sets):
    tasks = load_tasks(two_sets / "tasks")
    items = {i.key: i for i in join(tasks, load_solutions(two_sets / "dev"))}
    assert set(items) == {
        ("open570", "PostgreSQL_5"),
        ("open570", "MySQL_1"),
        ("pg530", "PostgreSQL_5"),
    }
    assert items[("open570", "PostgreSQL_5")].solution.sol_sql == ["SELECT 'open'"]
    assert items[("pg530", "PostgreSQL_5")].solution.sol_sql == ["SELECT 'pg'"]
    assert items[("pg530", "PostgreSQL_5")].task.category == "Management"
    assert items[("open570", "MySQL_1")].solution is None
    assert [e.key for e in load_dev_ids(two_sets / "dev")] == [
        ("open570", "PostgreSQL_5"),
        ("pg530", "PostgreSQL_5"),
    ]


def test_pred_sqls_may_be_a_list_a_python_list_string_or_split_text():
    assert split_sql_field(["SELECT 1", "SELECT 2"]) == ["SELECT 1", "SELECT 2"]
    assert split_sql_field("['SELECT 1', \"SELECT 'a'\"]") == ["SELECT 1", "SELECT 'a'"]
    assert split_sql_field("SELECT 1 [split] SELECT 2") == ["SELECT 1", "SELECT 2"]
    assert split_sql_field("[1 is not a list") == ["[1 is not a list"]
    assert split_sql_field("") == [] and split_sql_field(None) == []
    prediction = Prediction.model_validate({"instance_id": 7, "pred_sqls": "['SELECT 7']"})
    assert (prediction.instance_id, prediction.pred_sqls) == (7, ["SELECT 7"])


def test_predictions_are_keyed_by_their_file_or_the_only_task_set(two_sets, tmp_path):
    preds = write_jsonl(
        tmp_path / "open.jsonl", [{"instance_id": "PostgreSQL_5", "pred_sqls": ["SELECT 9"]}]
    )
    assert set(load_predictions(preds)) == {("open570", "PostgreSQL_5")}
    pg_items = join(load_tasks(two_sets / "tasks" / "pg530.jsonl"), {})
    anonymous = write_jsonl(
        tmp_path / "preds.jsonl", [{"instance_id": "PostgreSQL_5", "pred_sqls": ["SELECT 8"]}]
    )
    assert predictions_for(anonymous, pg_items) == {("pg530", "PostgreSQL_5"): ["SELECT 8"]}
    with pytest.raises(BenchDataError, match="name set"):
        predictions_for(preds, pg_items)


def test_bad_files_raise_typed_errors_with_the_line(tmp_path):
    bad = tmp_path / "flash.jsonl"
    bad.write_text(json.dumps(task_record(1)) + "\n{not json\n")
    with pytest.raises(BenchDataError, match=r"flash.jsonl:2: not JSON"):
        load_tasks(bad)
    missing_field = write_jsonl(tmp_path / "x.jsonl", [{"instance_id": 1}])
    with pytest.raises(BenchDataError, match=r"x.jsonl:1: invalid task"):
        load_tasks(missing_field)
    with pytest.raises(BenchDataError, match="file not found"):
        load_tasks(tmp_path / "nope.jsonl")


def test_set_names_and_filters():
    assert canonical_set("open") == "open570"
    assert canonical_set("sqlite_500") == "sqlite500"
    assert canonical_set("pg530_solutions") == "pg530"


def test_filter_by_set_dialect_category_ids_and_limit(two_sets):
    items = join(load_tasks(two_sets / "tasks"), load_solutions(two_sets / "dev"))
    keys = lambda f: [i.key for i in f.apply(items)]  # noqa: E731
    assert keys(TaskFilter(sets=["PG530"])) == [("pg530", "PostgreSQL_5")]
    assert keys(TaskFilter(dialects=["mysql"])) == [("open570", "MySQL_1")]
    assert keys(TaskFilter(categories=["management"])) == [("pg530", "PostgreSQL_5")]
    assert keys(TaskFilter(ids=["pg530/PostgreSQL_5"])) == [("pg530", "PostgreSQL_5")]
    assert len(keys(TaskFilter(ids=["PostgreSQL_5"]))) == 2
    assert len(keys(TaskFilter(with_solution_only=True))) == 2
    assert len(keys(TaskFilter(limit=1))) == 1


def test_static_evaluability():
    created = check_statements(
        [
            "CREATE TABLE t (id INT REFERENCES parent(id))",
            "CREATE TABLE parent (id INT PRIMARY KEY)",
            "WITH c AS (SELECT * FROM t) SELECT * FROM c, generate_series(1, 3), pg_class",
            "ALTER TABLE t RENAME TO t2",
            "SELECT * FROM t2",
        ],
        "PostgreSQL",
    )
    assert created.evaluable, created.reason
    needs = check_statements(["INSERT INTO t SELECT * FROM customers"], "PostgreSQL")
    assert not needs.evaluable and needs.missing == ["customers", "t"]
    # SQLite does not check foreign keys: a reference to an absent table does not matter
    assert check_statements(["CREATE TABLE a (x REFERENCES member(id))"], "SQLite").evaluable
    assert not check_statements(["SELECT 1"], "Oracle").evaluable
