"""The schema constraint's wiring (issue 38, item 6): the engine gives the schema's names to
the requests that write SQL (the raw rewrite, its samples, generate_sql's JSON), not to the
others, and `schema_constraint=False` (`--no-schema-constraint`) gives them to none. Scripted
LLM, real SQLite; the local decoder's side is tests/llm/test_llm_local_constraint.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acts_sql import CorrectionOptions, correct
from acts_sql.cli.options import correction_options
from acts_sql.engine.recording import TracedLLM
from acts_sql.llm.base import LLMRequest, Message, SqlNames
from support import scripted, users_db

QUESTION = "List the names of all users."


@pytest.fixture
def db(tmp_path: Path) -> str:
    return users_db(tmp_path)


def raw(sql: str) -> str:
    return f"```sql\n{sql}\n```"


@pytest.mark.parametrize(("switch", "carried"), [(True, True), (False, False)])
def test_the_raw_rewrite_carries_the_schemas_names_unless_switched_off(db, switch, carried):
    llm = scripted({"correct": [raw("SELECT name FROM users")] * 3})
    options = CorrectionOptions(method="raw", schema_constraint=switch)
    correct(db, QUESTION, "SELEC name FROM users", llm=llm, options=options)
    [request] = llm.requests
    if carried:
        assert request.sql_names is not None
        assert set(request.sql_names.names) == {"users", "id", "name"}
    else:
        assert request.sql_names is None


def request(purpose: str, schema: dict | None = None) -> LLMRequest:
    return LLMRequest(
        purpose=purpose, messages=[Message(role="user", content="x")], json_schema=schema
    )


SQL_JSON = {"type": "object", "properties": {"sql": {"type": "string"}}}
JUDGE_JSON = {"type": "object", "properties": {"verdict": {"type": "string"}}}


@pytest.mark.parametrize(
    ("given", "carried"),
    [
        (request("correct"), True),
        (request("generate_sql", SQL_JSON), True),
        (request("fix_syntax", SQL_JSON), True),
        (request("judge", JUDGE_JSON), False),
        (request("plan"), False),
    ],
)
def test_only_requests_that_write_sql_carry_the_names(given, carried):
    names = SqlNames(names=["users", "name"])
    traced = TracedLLM.__new__(TracedLLM)
    traced.sql_names = names
    assert (traced.constrained(given).sql_names == names) is carried


def test_the_cli_flag_turns_the_constraint_off():
    assert correction_options({"no_schema_constraint": True}).schema_constraint is False
    assert correction_options({"no_schema_constraint": False}).schema_constraint is True
    assert CorrectionOptions().schema_constraint is True


def test_a_trace_records_a_constrained_call(db):
    class Constrained:
        name = "local:stand-in"

        def __init__(self):
            self.inner = scripted({"correct": [raw("SELECT name FROM users")]})

        def complete(self, req):
            response = self.inner.complete(req)
            usage = response.usage.model_copy(update={"constrained": True, "refused_tokens": 2})
            return response.model_copy(update={"usage": usage})

    result = correct(
        db,
        QUESTION,
        "SELEC name FROM users",
        llm=Constrained(),
        options=CorrectionOptions(method="raw"),
    )
    [call] = [e for e in result.trace if e.kind == "llm_call"]
    assert call.data.constrained is True and call.data.refused_tokens == 2
    assert json.loads(call.data.model_dump_json())["refused_tokens"] == 2
