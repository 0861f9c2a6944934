"""The evaluator on synthetic SQLite tasks (always run: SQLite needs no server)."""

from __future__ import annotations

from acts_sql.bench.models import EvalMode, Status
from acts_sql.bench.scorer import EvalOptions, Evaluator

SHOP = [
    "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT, amount REAL, day TEXT)",
    "INSERT INTO orders VALUES (1, 'ann', 10.0, '2024-01-05'), (2, 'bob', 12.5, '2024-01-06'),"
    " (3, 'ann', 7.25, '2024-02-01'), (4, 'cid', 3.0, '2024-02-03')",
]
SOL = ["SELECT customer, SUM(amount) FROM orders GROUP BY customer"]


def test_same_rows_in_another_order_pass_set_semantics(sqlite_evaluator, task, tests_sources):
    item = task(preprocess=SHOP, sol=SOL, tests=[tests_sources["sqlite_ex_base"]])
    reordered = ["SELECT customer, SUM(amount) FROM orders GROUP BY customer ORDER BY 2 DESC"]
    result = sqlite_evaluator.score(item, reordered)
    assert result.status == Status.PASSED, result.reason
    assert (result.tests_passed, result.tests_total) == (1, 1)


def test_different_rows_fail(sqlite_evaluator, task, tests_sources):
    item = task(preprocess=SHOP, sol=SOL, tests=[tests_sources["sqlite_ex_base"]])
    result = sqlite_evaluator.score(item, ["SELECT customer, MAX(amount) FROM orders GROUP BY 1"])
    assert result.status == Status.FAILED
    assert "ex_base returned 0" in result.reason
    assert result.failed_tests == ["test_1"]


def test_order_condition_compares_ordered_lists(sqlite_evaluator, task, tests_sources):
    sol = ["SELECT id FROM orders ORDER BY amount"]
    item = task(
        preprocess=SHOP,
        sol=sol,
        tests=[tests_sources["sqlite_ex_base"]],
        conditions={"order": True},
    )
    assert sqlite_evaluator.score(item, sol).status == Status.PASSED
    reversed_ = sqlite_evaluator.score(item, ["SELECT id FROM orders ORDER BY amount DESC"])
    assert reversed_.status == Status.FAILED


def test_numbers_are_rounded_to_two_decimals(sqlite_evaluator, task, tests_sources):
    item = task(preprocess=SHOP, sol=["SELECT 1.0 / 3"], tests=[tests_sources["sqlite_ex_base"]])
    assert sqlite_evaluator.score(item, ["SELECT 0.333"]).status == Status.PASSED
    assert sqlite_evaluator.score(item, ["SELECT 0.34"]).status == Status.FAILED


COUNT_WITHOUT_DISTINCT = """
def test_case(pred_sqls, sol_sqls, db_path, conn, conditions):
    rows, _, _ = execute_queries(remove_distinct(pred_sqls), db_path, conn)
    assert len(rows) == 4, f"{len(rows)} rows"
"""


def test_remove_distinct_splits_on_spaces(sqlite_evaluator, task):
    # SQLite's remove_distinct drops the token "DISTINCT" only: "DISTINCT(customer)" stays
    item = task(preprocess=SHOP, sol=["SELECT 1"], tests=[COUNT_WITHOUT_DISTINCT])
    spaced = sqlite_evaluator.score(item, ["SELECT DISTINCT customer FROM orders"])
    assert spaced.status == Status.PASSED, spaced.reason
    glued = sqlite_evaluator.score(item, ["SELECT DISTINCT(customer) FROM orders"])
    assert glued.status == Status.FAILED
    assert "3 rows" in glued.reason


def test_default_test_ignores_comments_distinct_and_duplicates(sqlite_evaluator, task):
    # no test cases: the official default test (remove comments, DISTINCT, ROUND; ex_base)
    item = task(preprocess=SHOP, sol=["SELECT customer FROM orders"], tests=[])
    spaced = sqlite_evaluator.score(item, ["SELECT DISTINCT customer FROM orders -- one each\n"])
    assert spaced.status == Status.PASSED, spaced.reason
    other = sqlite_evaluator.score(item, ["SELECT customer FROM orders WHERE id > 2"])
    assert other.status == Status.FAILED


def test_default_test_strips_round(sqlite_evaluator, task):
    item = task(preprocess=SHOP, sol=["SELECT SUM(amount) FROM orders"], tests=[])
    assert sqlite_evaluator.score(item, ["SELECT ROUND(SUM(amount), 0) FROM orders"]).passed


def test_erroring_prediction_is_an_error_and_runs_no_test(sqlite_evaluator, task):
    marker = """
def test_case(pred_sqls, sol_sqls, db_path, conn, conditions):
    raise AssertionError("the test ran")
"""
    item = task(preprocess=SHOP, sol=SOL, tests=[marker])
    result = sqlite_evaluator.score(item, ["SELEC customer FROM orders"])
    assert result.status == Status.ERROR
    assert "syntax error" in result.reason
    assert result.tests_total == 0


def test_statements_stop_at_the_first_error(sqlite_evaluator, task, tests_sources):
    probe = """
def test_case(pred_sqls, sol_sqls, db_path, conn, conditions):
    rows, error, timeout = execute_queries(["SELECT COUNT(*) FROM orders"], db_path, conn)
    assert rows == [(4,)], rows
"""
    item = task(preprocess=SHOP, sol=["SELECT 1"], tests=[probe])
    result = sqlite_evaluator.score(
        item, ["SELECT * FROM nowhere", "INSERT INTO orders VALUES (9, 'x', 1, '2024-03-01')"]
    )
    assert result.status == Status.ERROR
    assert "statement 1 failed: no such table: nowhere" in result.reason
    assert result.absent_table == "no such table: nowhere"


STRING_ARGUMENT = """
def test_case(pred_sqls, sol_sqls, db_path, conn, conditions):
    rows, error, timeout = execute_queries("SELECT COUNT(*) FROM orders", db_path, conn)
    assert (rows, error, timeout) == ([(4,)], False, False), (rows, error, timeout)
    assert ex_base(pred_sqls[0], "SELECT 4", db_path, conn, conditions) == 1
"""


def test_execute_queries_takes_a_string_as_one_statement(sqlite_evaluator, task):
    # the official SQLite helper wraps a string in a list; iterating over its
    # characters would run "S", "E", ... and fail
    item = task(preprocess=SHOP, sol=["SELECT 1"], tests=[STRING_ARGUMENT])
    result = sqlite_evaluator.score(item, ["SELECT COUNT(*) FROM orders"])
    assert result.status == Status.PASSED, result.reason


def test_empty_results_never_match(sqlite_evaluator, task, tests_sources):
    empty = ["SELECT customer FROM orders WHERE amount > 100"]
    item = task(preprocess=SHOP, sol=empty, tests=[tests_sources["sqlite_ex_base"]])
    result = sqlite_evaluator.score(item, empty)
    assert result.status == Status.FAILED
    assert "ex_base returned 0" in result.reason


def test_test_case_sees_pred_query_result_and_separate_locals(sqlite_evaluator, task):
    uses_result = """
def test_case(pred_sqls, sol_sqls, db_path, conn, conditions):
    assert pred_query_result == [(4,)], pred_query_result
"""
    item = task(preprocess=SHOP, sol=["SELECT 1"], tests=[uses_result])
    assert sqlite_evaluator.score(item, ["SELECT COUNT(*) FROM orders"]).passed
    # a helper defined at the top of the source lands in the locals, which the
    # test function cannot see: NameError, as in the official evaluator
    top_level_helper = """
def expected():
    return 4

def test_case(pred_sqls, sol_sqls, db_path, conn, conditions):
    assert pred_query_result[0][0] == expected()
"""
    item = task(preprocess=SHOP, sol=["SELECT 1"], tests=[top_level_helper])
    result = sqlite_evaluator.score(item, ["SELECT COUNT(*) FROM orders"])
    assert result.status == Status.FAILED
    assert "NameError" in result.reason


def test_issue_sql_that_passes_fails_the_task(sqlite_evaluator, task, tests_sources):
    # the official SQLite evaluator first checks that the issue SQL fails the tests
    item = task(
        preprocess=SHOP,
        issue=SOL,
        sol=SOL,
        tests=[tests_sources["sqlite_ex_base"]],
    )
    result = sqlite_evaluator.score(item, SOL)
    assert result.status == Status.FAILED
    assert "issue SQL passes" in result.reason


def test_management_task_sees_its_writes_on_one_connection(sqlite_evaluator, task):
    check = """
def test_case(pred_sqls, sol_sqls, db_path, conn, conditions):
    rows, _, _ = execute_queries(["SELECT amount FROM orders WHERE id = 4"], db_path, conn)
    assert rows == [(30.0,)], rows
"""
    item = task(
        preprocess=SHOP,
        issue=["UPDATE orders SET amount = 30 WHERE id = 3"],
        sol=["UPDATE orders SET amount = 30 WHERE id = 4"],
        tests=[check],
        category="Management",
    )
    assert sqlite_evaluator.score(
        item, ["UPDATE orders SET amount = amount * 10 WHERE id = 4"]
    ).passed
    assert not sqlite_evaluator.score(item, ["UPDATE orders SET amount = 30 WHERE id = 3"]).passed


def test_each_task_gets_a_fresh_database(sqlite_evaluator, task):
    creates = task(preprocess=SHOP, sol=["SELECT 1"], tests=[])
    assert sqlite_evaluator.score(
        creates, ["CREATE TABLE IF NOT EXISTS leftover (x)", "SELECT 1"]
    ).passed
    probe = """
def test_case(pred_sqls, sol_sqls, db_path, conn, conditions):
    rows, _, _ = execute_queries(
        ["SELECT name FROM sqlite_master WHERE name = 'leftover'"], db_path, conn)
    assert rows == [], rows
"""
    after = task(preprocess=SHOP, sol=["SELECT 1"], tests=[probe])
    assert sqlite_evaluator.score(after, ["SELECT 1"]).passed


def test_a_hanging_test_case_times_out(task):
    hangs = """
def test_case(pred_sqls, sol_sqls, db_path, conn, conditions):
    while True:
        pass
"""
    item = task(preprocess=SHOP, sol=["SELECT 1"], tests=[hangs])
    with Evaluator(EvalOptions(test_timeout_s=1, task_timeout_s=30)) as evaluator:
        result = evaluator.score(item, ["SELECT 1"])
    assert result.status == Status.TIMEOUT
    assert "longer than 1 s" in result.reason
    assert result.seconds < 15


def test_a_task_past_its_time_limit_is_killed(task):
    sleeps = """
def test_case(pred_sqls, sol_sqls, db_path, conn, conditions):
    import time
    time.sleep(60)
"""
    item = task(preprocess=SHOP, sol=["SELECT 1"], tests=[sleeps])
    with Evaluator(EvalOptions(test_timeout_s=100, task_timeout_s=1.5)) as evaluator:
        result = evaluator.score(item, ["SELECT 1"])
        # the worker survives: the next task is scored normally
        fine = evaluator.score(task(preprocess=SHOP, sol=["SELECT 1"], tests=[]), ["SELECT 1"])
    assert result.status == Status.TIMEOUT
    assert "stopped" in result.reason
    assert fine.passed


def test_a_test_that_kills_its_process_is_an_error(sqlite_evaluator, task):
    exits = """
def test_case(pred_sqls, sol_sqls, db_path, conn, conditions):
    import os
    os._exit(3)
"""
    item = task(preprocess=SHOP, sol=["SELECT 1"], tests=[exits])
    result = sqlite_evaluator.score(item, ["SELECT 1"])
    assert result.status == Status.ERROR
    assert "process died" in result.reason


def test_missing_prediction_fails(sqlite_evaluator, task, tests_sources):
    item = task(preprocess=SHOP, sol=SOL, tests=[tests_sources["sqlite_ex_base"]])
    result = sqlite_evaluator.score(item, None)
    assert result.status == Status.FAILED
    assert result.reason == "no prediction for this task"


def test_tasks_that_need_absent_tables_are_not_evaluable(sqlite_evaluator, task):
    uses_original_db = task(sol=["SELECT * FROM customers"], issue=["SELECT * FROM customers"])
    result = sqlite_evaluator.score(uses_original_db, ["SELECT 1"])
    assert result.status == Status.NOT_EVALUABLE
    assert "customers" in result.reason
    no_solution = uses_original_db.model_copy(update={"solution": None})
    assert sqlite_evaluator.score(no_solution, ["SELECT 1"]).status == Status.NOT_EVALUABLE


def test_gold_and_issue_modes_score_the_solution_and_the_issue_sql(task, tests_sources):
    item = task(
        preprocess=SHOP,
        issue=["SELECT customer, SUM(amount) FROM orders"],
        sol=SOL,
        tests=[tests_sources["sqlite_ex_base"]],
    )
    with Evaluator(EvalOptions(mode=EvalMode.GOLD)) as gold:
        assert gold.score(item, None).status == Status.PASSED
    with Evaluator(EvalOptions(mode=EvalMode.ISSUE)) as issue:
        assert issue.score(item, None).status == Status.FAILED


def test_sqlite_efficiency_tasks_are_not_swapped(task):
    # the official SQLite evaluator ignores the efficiency flag
    item = task(preprocess=SHOP, issue=["SELECT 2"], sol=["SELECT 1"], efficiency=True)
    job = Evaluator().job_for(item, ["SELECT 3"], target=_sqlite_target())
    main = job.phases[-1]
    assert (main.test_pred_sqls, main.test_sol_sqls) == (["SELECT 3"], ["SELECT 1"])


def _sqlite_target():
    from acts_sql.bench.jobs import DatabaseTarget

    return DatabaseTarget(dialect="SQLite", name="/nonexistent/x.sqlite")
