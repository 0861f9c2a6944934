"""The runs an MCP server keeps for explain_run: bounded, oldest first out."""

from __future__ import annotations

import pytest

from acts_sql.engine.result import CorrectionResult
from acts_sql.errors import ConfigError
from acts_sql.mcp_server.runs import RunStore, UnknownRunError


def result(sql: str) -> CorrectionResult:
    return CorrectionResult(
        sql=sql, accepted=True, original_sql=sql, method="raw", dialect="sqlite", question="q"
    )


def test_the_store_keeps_the_last_runs_and_names_what_it_dropped():
    store = RunStore(keep=2)
    ids = [store.add(result(f"SELECT {i}")) for i in range(3)]
    assert len(set(ids)) == 3 and len(store) == 2
    assert store.get(ids[2]).sql == "SELECT 2" and store.get(ids[1]).sql == "SELECT 1"
    with pytest.raises(UnknownRunError, match="keeps the last 2 runs"):
        store.get(ids[0])


def test_a_store_keeps_at_least_one_run():
    with pytest.raises(ConfigError):
        RunStore(keep=0)


def test_the_mcp_backend_takes_llm_timeout_and_the_endpoint_flags():
    from acts_sql.cli.mcp_command import mcp_backend
    from acts_sql.llm.openai_backend import OpenAIBackend

    flags = {
        "llm": "openai:q05",
        "base_url": "http://127.0.0.1:9/v1",
        "api_key": "none",
        "llm_timeout": 12.5,
        "llm_cache": None,
    }
    backend = mcp_backend(flags)
    assert isinstance(backend, OpenAIBackend) and backend.timeout == 12.5
    assert mcp_backend({**flags, "llm_timeout": None}).timeout == 300.0  # loopback default
