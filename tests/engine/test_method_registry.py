"""The method registry (engine/methods.py): every method has a runner; linear overrides
the search steps."""

from __future__ import annotations

from acts_sql.engine.linear_search import LinearSearch
from acts_sql.engine.methods import METHODS
from acts_sql.engine.options import Method
from acts_sql.engine.search import TreeSearch


def test_every_method_has_a_runner():
    assert set(METHODS) == set(Method)


def test_the_linear_search_overrides_the_tree_search_steps():
    overridden = {"_readings", "_pick", "_replan", "_too_deep", "_backtrack"}
    assert issubclass(LinearSearch, TreeSearch)
    assert {name for name in overridden if name in vars(LinearSearch)} == overridden
