"""normalize_sql: equal for cosmetic differences, different for real ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acts_sql.sql.query_text import normalize_sql

CASES: dict[str, list[dict[str, Any]]] = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "sql" / "normalize.json").read_text()
)


def _ids(cases: list[dict[str, Any]]) -> list[str]:
    return [case["why"] for case in cases]


@pytest.mark.parametrize("case", CASES["equal"], ids=_ids(CASES["equal"]))
def test_cosmetic_differences_normalise_equal(case: dict[str, Any]) -> None:
    assert normalize_sql(case["a"], case["dialect"]) == normalize_sql(case["b"], case["dialect"])


@pytest.mark.parametrize("case", CASES["different"], ids=_ids(CASES["different"]))
def test_real_differences_stay_different(case: dict[str, Any]) -> None:
    assert normalize_sql(case["a"], case["dialect"]) != normalize_sql(case["b"], case["dialect"])


@pytest.mark.parametrize(
    "case", CASES["equal"] + CASES["different"], ids=_ids(CASES["equal"] + CASES["different"])
)
def test_normalising_is_idempotent(case: dict[str, Any]) -> None:
    once = normalize_sql(case["a"], case["dialect"])
    assert normalize_sql(once, case["dialect"]) == once


@pytest.mark.parametrize(
    ("sql", "dialect", "expected"),
    [
        ("select (a) x from t where ((b=1)) -- c\n;", "sqlite", "SELECT a AS x FROM t WHERE b = 1"),
        ("select top 3 [a] from t", "sqlserver", "SELECT TOP 3 [a] FROM t"),
        ("selec a ,b from t ;", "sqlite", "SELEC A, B FROM T"),  # unparseable: token form
        ("select 'it''s  ok' ,  x from t -- c", "sqlite", "SELECT 'it''s  ok', x FROM t"),
        ("select  x ,'a  b -- c", "sqlite", "SELECT X, 'a  b -- c"),  # untokenizable
        ("", "sqlite", ""),
        (" ; -- nothing\n", "postgresql", ""),
    ],
)
def test_canonical_text(sql: str, dialect: str, expected: str) -> None:
    assert normalize_sql(sql, dialect) == expected
