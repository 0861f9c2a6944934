"""Fixtures for the viewer tests: the Figure 3 run, and one with hostile text."""

from __future__ import annotations

import pytest

from acts_sql import correct
from acts_sql.demo import demo_db_path, get_task
from acts_sql.engine.result import CorrectionResult
from support import demo_script, scripted

PAYLOAD = '</script><img src=x onerror="window.__pwned=1"><!--<script>window.__pwned=2</script>'


@pytest.fixture(scope="session")
def figure3_result() -> CorrectionResult:
    task = get_task("figure3")
    return correct(
        str(demo_db_path()), task.question, task.sql, llm=scripted(demo_script("figure3"))
    )


@pytest.fixture(scope="session")
def hostile_result() -> CorrectionResult:
    """The Figure 3 run with markup in the question, the SQL and an LLM reply."""
    task = get_task("figure3")
    script = demo_script("figure3")
    script["judge"][0] = script["judge"][0].replace(
        "hours apart", "hours apart " + PAYLOAD.replace('"', "'")
    )
    sql = task.sql + f"\n-- {PAYLOAD}"
    return correct(str(demo_db_path()), task.question + " " + PAYLOAD, sql, llm=scripted(script))
