"""The evaluator on synthetic PostgreSQL and MySQL (MariaDB) tasks.

They need the test servers that scripts/test.sh starts (ACTS_SQL_TEST_PG_URL,
ACTS_SQL_TEST_MYSQL_URL) and skip with the reason when those are not set.
"""

from __future__ import annotations

import psycopg2
import pytest

from acts_sql.bench.models import Status
from acts_sql.bench.servers import postgres_connect_kwargs

PG_SHOP = [
    "CREATE TABLE orders (id INT PRIMARY KEY, customer TEXT, amount NUMERIC(8,2), day DATE)",
    "INSERT INTO orders VALUES (1, 'ann', 10.00, '2024-01-05'), (2, 'bob', 12.50, '2024-01-06'),"
    " (3, 'ann', 7.25, '2024-02-01'), (4, 'cid', 3.00, '2024-02-03')",
]
MY_SHOP = [
    "CREATE TABLE orders (id INT PRIMARY KEY, customer VARCHAR(20), amount DECIMAL(8,2), day DATE)",
    *PG_SHOP[1:],
]
SOL = ["SELECT customer, SUM(amount) FROM orders GROUP BY customer"]


# -- PostgreSQL ------------------------------------------------------------------------------


def test_pg_set_semantics_ignore_order_and_duplicates(server_evaluator, task, tests_sources):
    item = task(dialect="PostgreSQL", preprocess=PG_SHOP, sol=SOL, tests=[tests_sources["ex_base"]])
    doubled = [
        "SELECT customer, SUM(amount) FROM orders GROUP BY customer "
        "UNION ALL SELECT customer, SUM(amount) FROM orders GROUP BY customer ORDER BY 1 DESC"
    ]
    assert server_evaluator.score(item, doubled).status == Status.PASSED
    wrong = server_evaluator.score(item, ["SELECT customer, MAX(amount) FROM orders GROUP BY 1"])
    assert wrong.status == Status.FAILED


def test_pg_dates_compare_as_iso_days(server_evaluator, task, tests_sources):
    sol = ["SELECT day FROM orders WHERE customer = 'ann'"]
    item = task(dialect="PostgreSQL", preprocess=PG_SHOP, sol=sol, tests=[tests_sources["ex_base"]])
    as_text = ["SELECT to_char(day, 'YYYY-MM-DD') FROM orders WHERE customer = 'ann'"]
    assert server_evaluator.score(item, as_text).status == Status.PASSED
    timestamps = ["SELECT day + time '13:30' FROM orders WHERE customer = 'ann'"]
    assert server_evaluator.score(item, timestamps).status == Status.PASSED
    us_format = ["SELECT to_char(day, 'MM/DD/YYYY') FROM orders WHERE customer = 'ann'"]
    assert server_evaluator.score(item, us_format).status == Status.FAILED


def test_pg_remove_distinct_is_a_regex(server_evaluator, task):
    counts = """
def test_case(pred_sqls, sol_sqls, db_name, conn):
    rows, _, _ = execute_queries(remove_distinct(pred_sqls), db_name, conn, None, "")
    assert len(rows) == 4, f"{len(rows)} rows"
"""
    item = task(dialect="PostgreSQL", preprocess=PG_SHOP, sol=["SELECT 1"], tests=[counts])
    glued = server_evaluator.score(item, ["SELECT DISTINCT(customer) FROM orders"])
    assert glued.status == Status.PASSED, glued.reason


def test_pg_several_statements_in_one_string_return_the_last_result(server_evaluator, task):
    last = """
def test_case(pred_sqls, sol_sqls, db_name, conn):
    assert pred_query_result == [(4,)], pred_query_result
"""
    item = task(dialect="PostgreSQL", preprocess=PG_SHOP, sol=["SELECT 1"], tests=[last])
    prediction = ["UPDATE orders SET amount = 0 WHERE id = 1; SELECT count(*) FROM orders"]
    assert server_evaluator.score(item, prediction).status == Status.PASSED


def test_pg_erroring_prediction_stops_and_is_an_error(server_evaluator, task, tests_sources):
    item = task(dialect="PostgreSQL", preprocess=PG_SHOP, sol=SOL, tests=[tests_sources["ex_base"]])
    result = server_evaluator.score(item, ["SELECT nope FROM orders", *SOL])
    assert result.status == Status.ERROR
    assert 'column "nope" does not exist' in result.reason


def test_pg_empty_results_never_match(server_evaluator, task, tests_sources):
    empty = ["SELECT customer FROM orders WHERE amount > 100"]
    item = task(
        dialect="PostgreSQL", preprocess=PG_SHOP, sol=empty, tests=[tests_sources["ex_base"]]
    )
    assert server_evaluator.score(item, empty).status == Status.FAILED


def test_pg_statement_timeouts_are_the_official_ones(server_evaluator, task):
    probe = """
def test_case(pred_sqls, sol_sqls, db_name, conn):
    rows, _ = perform_query_on_postgresql_databases(
        "SELECT current_setting('statement_timeout')", db_name, conn=conn)
    assert rows == [('1min',)], rows
    rows, _ = perform_query_on_postgresql_databases(
        "WITH RECURSIVE r AS (SELECT current_setting('statement_timeout') AS t) SELECT t FROM r",
        db_name, conn=conn)
    assert rows == [('15s',)], rows
"""
    item = task(dialect="PostgreSQL", preprocess=PG_SHOP, sol=["SELECT 1"], tests=[probe])
    result = server_evaluator.score(item, ["SELECT 1"])
    assert result.status == Status.PASSED, result.reason


def test_pg_efficiency_tasks_swap_the_arguments(server_evaluator, task):
    swapped = """
def test_case(pred_sqls, sol_sqls, db_name, conn):
    assert pred_sqls == ["SELECT * FROM orders WHERE customer || '' = 'ann'"], pred_sqls
    assert sol_sqls == ["SELECT * FROM orders WHERE id = 3"], sol_sqls
    assert performance_compare_by_qep(pred_sqls, sol_sqls, db_name, conn) == 1
"""
    item = task(
        dialect="PostgreSQL",
        preprocess=PG_SHOP,
        issue=["SELECT * FROM orders WHERE customer || '' = 'ann'"],
        sol=["SELECT * FROM orders WHERE id = 3 AND amount > 0"],
        tests=[swapped],
        efficiency=True,
        category="Efficiency",
    )
    result = server_evaluator.score(item, ["SELECT * FROM orders WHERE id = 3"])
    assert result.status == Status.PASSED, result.reason


def test_pg_each_task_has_its_own_database_dropped_afterwards(server_evaluator, task, pg_url):
    names = """
def test_case(pred_sqls, sol_sqls, db_name, conn):
    rows, _ = perform_query_on_postgresql_databases("SELECT current_database()", db_name, conn=conn)
    assert rows[0][0] == db_name
    raise AssertionError("database " + db_name)
"""
    item = task(dialect="PostgreSQL", preprocess=PG_SHOP, sol=["SELECT 1"], tests=[names])
    first = server_evaluator.score(item, ["SELECT 1"]).reason.rsplit(" ", 1)[-1]
    second = server_evaluator.score(item, ["SELECT 1"]).reason.rsplit(" ", 1)[-1]
    assert first != second and first.startswith("bc_shop_")
    conn = psycopg2.connect(**postgres_connect_kwargs(pg_url))
    try:
        with conn.cursor() as cur:
            cur.execute(
                "SELECT count(*) FROM pg_database WHERE datname IN (%s, %s)", (first, second)
            )
            assert cur.fetchone() == (0,)
    finally:
        conn.close()


def test_pg_issue_check_is_sqlite_only(server_evaluator, task, tests_sources):
    # PostgreSQL does not fail a task because its issue SQL would pass too
    item = task(
        dialect="PostgreSQL",
        preprocess=PG_SHOP,
        issue=SOL,
        sol=SOL,
        tests=[tests_sources["ex_base"]],
    )
    assert server_evaluator.score(item, SOL).status == Status.PASSED


def test_pg_postgis_tasks_are_scored_when_the_server_has_it(
    server_evaluator, task, tests_sources, pg_has_postgis
):
    # scripts/services.sh installs postgresql-<major>-postgis-3 when it can; without it a
    # task that needs PostGIS is not evaluable, with the reason
    preprocess = [
        "CREATE EXTENSION IF NOT EXISTS postgis",
        "CREATE TABLE place (id INT, geom geometry(Point, 4326))",
        "INSERT INTO place VALUES (1, ST_SetSRID(ST_MakePoint(0, 0), 4326)),"
        " (2, ST_SetSRID(ST_MakePoint(3, 4), 4326))",
    ]
    sol = [
        "SELECT round(ST_Distance(a.geom, b.geom)::numeric, 2) FROM place a, place b"
        " WHERE a.id = 1 AND b.id = 2"
    ]
    item = task(
        dialect="PostgreSQL", preprocess=preprocess, sol=sol, tests=[tests_sources["ex_base"]]
    )
    result = server_evaluator.score(item, ["SELECT 5.00"])
    if pg_has_postgis:
        assert result.status == Status.PASSED, result.reason
        assert server_evaluator.score(item, ["SELECT 4.00"]).status == Status.FAILED
    else:
        assert result.status == Status.NOT_EVALUABLE
        assert "'postgis'" in result.reason
    # the same path as a server without PostGIS: an extension the server does not have
    absent = task(
        dialect="PostgreSQL",
        preprocess=["CREATE EXTENSION IF NOT EXISTS acts_no_such_extension", *PG_SHOP],
        sol=SOL,
        tests=[tests_sources["ex_base"]],
    )
    result = server_evaluator.score(absent, SOL)
    assert result.status == Status.NOT_EVALUABLE
    assert "'acts_no_such_extension', which this server does not have" in result.reason


# -- MySQL (MariaDB) -------------------------------------------------------------------------


def test_mysql_set_semantics_and_dates(mysql_evaluator, task, tests_sources):
    item = task(dialect="MySQL", preprocess=MY_SHOP, sol=SOL, tests=[tests_sources["ex_base"]])
    reordered = ["SELECT customer, SUM(amount) FROM orders GROUP BY customer ORDER BY 2"]
    assert mysql_evaluator.score(item, reordered).status == Status.PASSED
    sol = ["SELECT day FROM orders WHERE customer = 'bob'"]
    dated = task(dialect="MySQL", preprocess=MY_SHOP, sol=sol, tests=[tests_sources["ex_base"]])
    as_text = ["SELECT DATE_FORMAT(day, '%Y-%m-%d') FROM orders WHERE customer = 'bob'"]
    assert mysql_evaluator.score(dated, as_text).status == Status.PASSED


def test_mysql_keeps_going_after_an_error_but_fails(mysql_evaluator, task):
    inserted = """
def test_case(pred_sqls, sol_sqls, db_name, conn):
    rows, _ = perform_query_on_mysql_databases("SELECT COUNT(*) FROM orders", db_name, conn)
    assert rows[0][0] == 5, rows
"""
    item = task(dialect="MySQL", preprocess=MY_SHOP, sol=["SELECT 1"], tests=[inserted])
    ok = ["INSERT INTO orders VALUES (5, 'dan', 1, '2024-03-01')"]
    assert mysql_evaluator.score(item, ok).status == Status.PASSED
    result = mysql_evaluator.score(item, ["SELECT nope FROM orders", *ok])
    assert result.status == Status.ERROR
    assert "Unknown column 'nope'" in result.reason


def test_mysql_empty_results_never_match(mysql_evaluator, task, tests_sources):
    empty = ["SELECT customer FROM orders WHERE amount > 100"]
    item = task(dialect="MySQL", preprocess=MY_SHOP, sol=empty, tests=[tests_sources["ex_base"]])
    assert mysql_evaluator.score(item, empty).status == Status.FAILED


STRING_ARGUMENT = """
def test_case(pred_sqls, sol_sqls, db_name, conn):
    outcome = execute_queries("SELECT COUNT(*) FROM orders", db_name, conn, None, "")
    assert outcome[0] is None and outcome[1] is True, outcome
    assert ex_base(pred_sqls[0], "SELECT 4", db_name, conn) == 0
    assert ex_base(pred_sqls, ["SELECT 4"], db_name, conn) == 1
"""


@pytest.mark.parametrize(("dialect", "shop"), [("PostgreSQL", PG_SHOP), ("MySQL", MY_SHOP)])
def test_server_execute_queries_iterates_over_a_string(server_evaluator, task, dialect, shop):
    # unlike SQLite's, the official PostgreSQL and MySQL helpers do not wrap a
    # string: each character runs as a statement, and fails
    if dialect == "MySQL" and server_evaluator.factory("MySQL") is None:
        pytest.skip("ACTS_SQL_TEST_MYSQL_URL is not set")
    item = task(dialect=dialect, preprocess=shop, sol=["SELECT 1"], tests=[STRING_ARGUMENT])
    result = server_evaluator.score(item, ["SELECT COUNT(*) FROM orders"])
    assert result.status == Status.PASSED, result.reason


@pytest.mark.parametrize("dialect", ["PostgreSQL", "MySQL"])
def test_server_task_without_its_tables_is_not_evaluable(server_evaluator, task, dialect):
    item = task(dialect=dialect, sol=["SELECT * FROM customers"], tests=[])
    result = server_evaluator.score(item, ["SELECT 1"])
    assert result.status == Status.NOT_EVALUABLE
