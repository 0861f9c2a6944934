"""The official evaluator's helper functions, one module per dialect.

A test case is Python source from the benchmark that calls these by name
(``ex_base``, ``execute_queries``, ``remove_distinct``, ...). Each dialect's
class binds them to one task's database and hands them to the test case as
its globals (``test_globals``); ``run`` is ``execute_queries`` with the error
texts kept, for the evaluator's own phases.
"""

from __future__ import annotations

from typing import Any, Protocol

from acts_sql.bench.helpers.common import ExecOutcome


class HelperSet(Protocol):
    """What the test-case runner needs from a dialect's helpers."""

    dialect: str
    db_name: str
    test_prefix: str
    test_call: str

    def connect(self) -> Any: ...

    def run(self, queries: list[str], conn: Any, *, solution: bool = True) -> ExecOutcome: ...

    def test_globals(self, pred_query_result: Any) -> dict[str, Any]: ...

    def close_all(self) -> None: ...


__all__ = ["ExecOutcome", "HelperSet"]
