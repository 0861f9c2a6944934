"""`CorrectionOptions`: the one carrier of a correction's method, budget and switches."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from acts_sql import Budget, CorrectionOptions, Method, correct
from acts_sql.engine.options import DEFAULT_TEMPERATURE
from acts_sql.errors import ConfigError
from support import demo_script, scripted


def test_of_takes_flat_values_and_leaves_none_at_the_default():
    options = CorrectionOptions.of(
        method="VOTE", max_llm_calls=8, max_seconds=30.0, candidates=3, temperature=None
    )
    assert options.method is Method.VOTE and options.candidates == 3
    assert options.budget == Budget(max_llm_calls=8, max_seconds=30.0)
    assert options.temperature == DEFAULT_TEMPERATURE
    assert "temperature" not in options.model_fields_set
    assert CorrectionOptions.of() == CorrectionOptions()


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"method": "magic"}, "unknown method 'magic'; choose one of: acts, linear"),
        ({"max_nodes": 0}, "invalid option max_nodes"),
        ({"candidates": 99}, "invalid option candidates"),
        ({"max_llm_call": 3}, "invalid option max_llm_call"),
    ],
)
def test_of_names_the_bad_option(values, message):
    with pytest.raises(ConfigError, match=message):
        CorrectionOptions.of(**values)


def test_a_misspelt_option_is_an_error_not_ignored():
    with pytest.raises(ValidationError):
        CorrectionOptions(max_llm_calls=3)  # a budget limit, not an option
    with pytest.raises(ValidationError):
        Budget(max_calls=3)


def test_correct_runs_with_the_options_given(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    options = CorrectionOptions(budget=Budget(max_llm_calls=5))
    llm = scripted(demo_script("figure3"))
    result = correct(demo_db, task.question, task.sql, llm=llm, options=options)
    assert result.usage.llm_calls == 5
    started = next(e for e in result.trace if e.kind == "run_started")
    assert started.data["options"]["budget"]["max_llm_calls"] == 5
