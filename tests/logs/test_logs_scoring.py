"""Result equivalence for `bench logs`: what counts as the gold answer."""

from __future__ import annotations

from acts_sql.bench.logs.scoring import GoldResult, canonical_rows, canonical_value, equivalent


def gold(rows, *, ordered=False, columns=None) -> GoldResult:
    width = len(rows[0]) if rows else 0
    return GoldResult(
        columns=columns or [f"c{i}" for i in range(width)],
        rows=canonical_rows(rows),
        ordered=ordered,
    )


def test_values_compare_by_meaning():
    assert canonical_value(5) == canonical_value(5.0)
    assert canonical_value(1 / 3) == canonical_value(0.33333333)  # 6 significant digits
    assert canonical_value(0.0101) != canonical_value(0.0102)
    assert canonical_value("2025-03-01 00:00:00") == canonical_value("2025-03-01")
    assert canonical_value("2025-03-01 13:00:00") != canonical_value("2025-03-01")
    assert canonical_value("5") != canonical_value(5)  # a string is not a number
    assert canonical_value(None) is None and canonical_value(True) == canonical_value(1)


def test_rows_are_a_multiset_unless_the_answer_is_ordered():
    answer = gold([["a", 1], ["b", 2]])
    assert equivalent([["b", 2], ["a", 1]], answer)
    assert not equivalent([["a", 1]], answer)  # a row missing
    assert not equivalent([["a", 1], ["b", 2], ["b", 2]], answer)  # a row too many
    assert not equivalent([["a", 1], ["b", 3]], answer)
    ordered = gold([["a", 1], ["b", 2]], ordered=True)
    assert equivalent([["a", 1.0], ["b", 2]], ordered)
    assert not equivalent([["b", 2], ["a", 1]], ordered)


def test_columns_may_come_in_any_order_and_extra_ones_are_allowed():
    answer = gold([["checkout"], ["search"]])
    assert equivalent([[12, "search"], [7, "checkout"]], answer)  # name with its count
    pair = gold([["a", 1], ["b", 2]])
    assert equivalent([[1, "a"], [2, "b"]], pair)
    # the right values, but not row by row
    assert not equivalent([["a", 2], ["b", 1]], pair)
    assert not equivalent([["a"], ["b"]], pair)  # a gold column missing


def test_equal_columns_are_matched_by_trying_the_assignments():
    answer = gold([[1, 1], [2, 3]])
    assert equivalent([[1, 1], [3, 2]], answer)  # the columns swapped
    assert not equivalent([[1, 1], [3, 3]], answer)
    two_same = gold([[1, 2], [2, 1]])
    assert equivalent([[2, 1], [1, 2]], two_same)


def test_an_empty_gold_needs_an_empty_answer():
    empty = GoldResult(columns=["n"], rows=[])
    assert equivalent([], empty) and not equivalent([[1]], empty)


def test_gold_results_of_an_unordered_answer_are_equal_in_any_row_order():
    rows = [["t:2025-03-02", "n:868.0"], ["t:2025-03-01", "n:929.0"], [None, "n:1.0"]]
    first = GoldResult(columns=["day", "users"], rows=rows)
    second = GoldResult(columns=["day", "users"], rows=list(reversed(rows)))
    assert first == second  # DuckDB's parallel aggregation returns groups in any order
    ordered = GoldResult(columns=["day", "users"], rows=rows, ordered=True)
    assert ordered != GoldResult(columns=["day", "users"], rows=list(reversed(rows)), ordered=True)
    assert ordered.rows == rows  # an ordered answer keeps its order
