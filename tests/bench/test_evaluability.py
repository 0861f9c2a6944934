"""The static evaluability check: only the SQL the evaluator runs must find its tables."""

from __future__ import annotations

import pytest

from acts_sql.bench.evaluability import check_task, required_statements
from acts_sql.bench.models import Status
from acts_sql.bench.test_sql import visible_sql

SHOP = ["CREATE TABLE orders (id INT PRIMARY KEY, amount INT)", "INSERT INTO orders VALUES (1, 5)"]
SOL = ["SELECT SUM(amount) FROM orders"]
UNDEFINED_CTE = ["SELECT * FROM monthly JOIN orders USING (id)"]
"""Issue SQL that forgot its WITH clause: ``monthly`` is no table of any database."""
SOLUTION_CREATES = ["INSERT INTO summary SELECT amount FROM orders"]
"""Issue SQL writing to a table that only the solution creates."""
CREATING_SOL = [
    "CREATE TABLE IF NOT EXISTS summary (total INT)",
    "INSERT INTO summary SELECT SUM(amount) FROM orders",
    "SELECT total FROM summary",
]


@pytest.mark.parametrize("dialect", ["PostgreSQL", "MySQL"])
@pytest.mark.parametrize("issue", [UNDEFINED_CTE, SOLUTION_CREATES])
def test_issue_sql_that_never_runs_needs_no_tables(dialect, issue, task):
    # PostgreSQL/MySQL run the issue SQL only for efficiency tasks
    item = task(dialect=dialect, preprocess=SHOP, issue=issue, sol=CREATING_SOL)
    verdict = check_task(item)
    assert verdict.evaluable, verdict.reason
    assert not set(issue) & set(required_statements(item))


@pytest.mark.parametrize(
    ("dialect", "efficiency"), [("PostgreSQL", True), ("MySQL", True), ("SQLite", False)]
)
def test_issue_sql_that_runs_needs_its_tables(dialect, efficiency, task):
    # efficiency tasks pass the issue SQL to the tests; SQLite runs it in its pre-check
    item = task(
        dialect=dialect, preprocess=SHOP, issue=UNDEFINED_CTE, sol=SOL, efficiency=efficiency
    )
    verdict = check_task(item)
    assert not verdict.evaluable
    assert verdict.missing == ["monthly"]


def test_without_a_solution_the_issue_sql_stands_in_for_it(task):
    item = task(dialect="PostgreSQL", preprocess=SHOP, issue=["SELECT * FROM customers"])
    item.solution = None
    assert check_task(item).missing == ["customers"]


def test_a_name_defined_as_a_cte_anywhere_is_no_table(task):
    # the solution reads "monthly", which the (not run) issue SQL defines as a CTE
    item = task(
        dialect="PostgreSQL",
        preprocess=SHOP,
        issue=["WITH monthly AS (SELECT id FROM orders) SELECT 1"],
        sol=["SELECT * FROM monthly"],
    )
    assert check_task(item).evaluable
    recursive = task(
        dialect="SQLite",
        sol=[
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) "
            "SELECT * FROM r"
        ],
    )
    assert check_task(recursive).evaluable


TEST_READS_ABSENT = """
def test_case(pred_sqls, sol_sqls, db_name, conn):
    check = "SELECT COUNT(*) FROM audit_log"
    for query in [check]:
        rows, _, _ = execute_queries([query], db_name, conn)
    perform_query_on_postgresql_databases(f"SELECT * FROM orders WHERE id = {rows[0][0]}", db_name)
"""


def test_sql_the_test_cases_run_needs_its_tables(task):
    item = task(dialect="PostgreSQL", preprocess=SHOP, sol=SOL, tests=[TEST_READS_ABSENT])
    verdict = check_task(item)
    assert not verdict.evaluable and verdict.missing == ["audit_log"]
    created = task(
        dialect="PostgreSQL",
        preprocess=[*SHOP, "CREATE TABLE audit_log (id INT)"],
        sol=SOL,
        tests=[TEST_READS_ABSENT],
    )
    assert check_task(created).evaluable


def test_clean_up_sql_needs_its_tables(task):
    item = task(
        dialect="PostgreSQL",
        preprocess=SHOP,
        sol=SOL,
        clean_up=["UPDATE superhero SET name = 'x'", "DROP TABLE orders"],
    )
    assert check_task(item).missing == ["superhero"]


def test_visible_sql_reads_literals_names_loops_and_f_strings():
    source = """
def test_case(pred_sqls, sol_sqls, db_name, conn):
    queries = ["SELECT 1 FROM a", "SELECT 2 FROM b"]
    for q in queries:
        execute_queries(remove_distinct([q]), db_name, conn)
    cur = conn.cursor()
    cur.execute(f"SELECT * FROM c WHERE x = '{pred_sqls[0]}'")
    ex_base(pred_sqls, ["SELECT 3 FROM d"], db_name, conn)
    perform_query_on_sqlite_databases(query=pred_sqls[0] + "x", db_path=db_name)
    assert "SELECT nothing FROM messages" not in str(pred_sqls)
"""
    assert visible_sql(source) == [
        "SELECT 1 FROM a",
        "SELECT 2 FROM b",
        "SELECT * FROM c WHERE x = '0'",
        "SELECT 3 FROM d",
    ]
    assert visible_sql("def test_case(:") == []


def test_scorer_scores_a_task_whose_issue_sql_uses_an_absent_table(sqlite_evaluator, task):
    # SQLite runs the issue SQL: a table only the solution creates is fine (the issue
    # SQL fails on it, as it should), one nobody creates makes the task not evaluable
    item = task(preprocess=SHOP, issue=SOLUTION_CREATES, sol=CREATING_SOL, tests=[])
    result = sqlite_evaluator.score(item, CREATING_SOL)
    assert result.status == Status.PASSED, result.reason
    absent = task(preprocess=SHOP, issue=UNDEFINED_CTE, sol=SOL, tests=[])
    result = sqlite_evaluator.score(absent, SOL)
    assert result.status == Status.NOT_EVALUABLE
    assert "monthly" in result.reason
