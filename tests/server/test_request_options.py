"""A request's `options`: within the service's limits; runs stored before they were one object."""

from __future__ import annotations

import json

import pytest

from acts_sql.engine.budget import DEFAULT_MAX_DEPTH, DEFAULT_MAX_LLM_CALLS, DEFAULT_MAX_NODES
from acts_sql.engine.options import Method
from acts_sql.server.config import LimitsConfig
from acts_sql.server.errors import ApiError, ErrorCode
from acts_sql.server.models import RequestOptions
from acts_sql.server.routes import bounded_options
from acts_sql.server.run import Run
from acts_sql.server.store.records import created_row, spec_from_json


def test_the_default_maxima_are_the_engines_budget():
    limits = LimitsConfig()
    assert (limits.max_llm_calls, limits.max_nodes, limits.max_depth) == (
        DEFAULT_MAX_LLM_CALLS,
        DEFAULT_MAX_NODES,
        DEFAULT_MAX_DEPTH,
    )


def test_a_limit_left_out_is_the_maximum_one_given_is_kept():
    limits = LimitsConfig(max_llm_calls=10, max_run_seconds=30)
    asked = RequestOptions.model_validate({"method": "vote", "budget": {"max_nodes": 5}})
    options = bounded_options(asked, limits)
    assert options.method is Method.VOTE
    budget = options.budget
    assert (budget.max_llm_calls, budget.max_nodes, budget.max_seconds) == (10, 5, 30)


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"budget": {"max_llm_calls": 11}}, ErrorCode.BUDGET_OVER_LIMIT),
        ({"budget": {"max_seconds": 31}}, ErrorCode.BUDGET_OVER_LIMIT),
        ({"json_retries": 0}, ErrorCode.UNKNOWN_FIELD),
        ({"parallel": 32}, ErrorCode.UNKNOWN_FIELD),
    ],
)
def test_what_a_request_may_not_ask_for_is_refused(body, code):
    limits = LimitsConfig(max_llm_calls=10, max_run_seconds=30)
    with pytest.raises(ApiError) as raised:
        bounded_options(RequestOptions.model_validate(body), limits)
    assert raised.value.code == code


def test_a_run_stored_with_its_options_beside_the_other_fields_is_read():
    stored = {
        "kind": "correct",
        "database": "demo",
        "question": "q",
        "sql": "SELECT 1",
        "method": "raw",
        "dialect": None,
        "max_llm_calls": 7,
        "max_nodes": 30,
        "max_depth": 8,
        "max_seconds": 300.0,
        "execution_tools": False,
        "ambiguity_detection": True,
        "candidates": None,
        "temperature": None,
        "language": None,
    }
    spec = spec_from_json(json.dumps(stored))
    assert spec.options.method is Method.RAW and not spec.options.execution_tools
    assert spec.options.budget.max_llm_calls == 7 and spec.options.budget.max_seconds == 300.0
    written = created_row(Run(spec, hard_deadline_s=1.0))[3]  # now: the options as one object
    assert json.loads(written)["options"]["budget"]["max_llm_calls"] == 7
    assert spec_from_json(written) == spec
