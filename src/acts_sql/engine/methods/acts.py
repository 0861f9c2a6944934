"""The `acts` method: the tree search (the paper's Algorithm 1), `engine/search.py`'s
`TreeSearch`, whose pools are handled by `engine/candidate_stage.py`."""

from __future__ import annotations

from acts_sql.engine.methods.base import MethodRun, run_search
from acts_sql.engine.search import SearchOutcome, TreeSearch


def run(r: MethodRun) -> SearchOutcome:
    return run_search(TreeSearch, r)
