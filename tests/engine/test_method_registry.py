"""The method registry (engine/methods/): every method has a runner in its own module;
linear overrides the search steps."""

from __future__ import annotations

import pytest

from acts_sql.engine.methods import METHODS
from acts_sql.engine.methods.linear import LinearSearch
from acts_sql.engine.options import Method
from acts_sql.engine.search import TreeSearch


def test_every_method_has_a_runner():
    assert set(METHODS) == set(Method)


@pytest.mark.parametrize("method", list(Method))
def test_each_method_runs_from_its_own_module(method: Method):
    runner = METHODS[method]
    assert runner.__module__ == f"acts_sql.engine.methods.{method.value}"
    assert runner.__name__ == "run"


def test_the_linear_search_overrides_the_tree_search_steps():
    overridden = {"_readings", "_pick", "_replan", "_too_deep", "_backtrack"}
    assert issubclass(LinearSearch, TreeSearch)
    assert {name for name in overridden if name in vars(LinearSearch)} == overridden
