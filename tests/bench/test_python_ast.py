"""Syntax trees of test-case sources are built one thread at a time."""

from __future__ import annotations

import ast
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from acts_sql.bench import python_ast
from acts_sql.bench.models import split_sql_field
from acts_sql.bench.test_sql import visible_sql

SOURCE = 'def test_case(conn):\n    execute_queries(["SELECT 1"])\n'


def test_scorer_threads_never_build_two_trees_at_once(monkeypatch):
    real_parse, inside, most = ast.parse, [0], [0]
    guard = threading.Lock()

    def slow_parse(source, *args, **kwargs):
        with guard:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        time.sleep(0.01)
        try:
            return real_parse(source, *args, **kwargs)
        finally:
            with guard:
                inside[0] -= 1

    monkeypatch.setattr(ast, "parse", slow_parse)
    with ThreadPoolExecutor(max_workers=4) as pool:
        found = list(pool.map(visible_sql, [SOURCE] * 12))
    assert found == [["SELECT 1"]] * 12
    assert most[0] == 1


@pytest.mark.parametrize(
    ("message", "kept"),
    [("AST constructor recursion depth mismatch (before=36, after=33)", True), ("other", False)],
)
def test_only_the_spurious_depth_mismatch_is_tried_again(monkeypatch, message, kept):
    real_eval, calls = ast.literal_eval, []

    def flaky_eval(text):
        calls.append(text)
        if len(calls) == 1:
            raise SystemError(message)
        return real_eval(text)

    monkeypatch.setattr(ast, "literal_eval", flaky_eval)
    if kept:
        assert split_sql_field("['SELECT 1', 'SELECT 2']") == ["SELECT 1", "SELECT 2"]
        assert len(calls) == 2
    else:
        with pytest.raises(SystemError, match="other"):
            python_ast.literal("['SELECT 1']")
        assert len(calls) == 1


def test_a_source_that_is_no_python_still_raises_syntax_error():
    with pytest.raises(SyntaxError):
        python_ast.parse("def (:")
    assert visible_sql("def (:") == []
