"""The budget and switch flags of `fix`, `batch` and `bench`: one `CorrectionOptions`."""

from __future__ import annotations

import pytest
import typer

from acts_sql.cli.options import correction_options, method_flag
from acts_sql.engine.options import DEFAULT_TEMPERATURE, Method
from acts_sql.errors import ConfigError


def test_flags_become_one_options_object():
    flags = {
        "db": "shop.db",  # not an option: left alone
        "method": Method.RAW,
        "no_execution_tools": True,
        "no_ambiguity": False,
        "max_llm_calls": 5,
        "max_seconds": 20.0,
        "candidates": None,
        "temperature": None,
        "parallel": 2,
    }
    options = correction_options(flags)
    assert options.method is Method.RAW and options.parallel == 2
    assert not options.execution_tools and options.ambiguity_detection
    assert (options.budget.max_llm_calls, options.budget.max_seconds) == (5, 20.0)
    assert options.candidates is None and options.temperature == DEFAULT_TEMPERATURE
    assert {"candidates", "temperature"}.isdisjoint(options.model_fields_set)


def test_a_bad_flag_value_is_a_config_error_naming_it():
    with pytest.raises(ConfigError, match="max_nodes"):
        correction_options({"max_nodes": 0})


def test_method_is_read_in_any_case_and_an_unknown_one_exits_2(capfd):
    assert method_flag("Critic") is Method.CRITIC and method_flag(Method.VOTE) is Method.VOTE
    with pytest.raises(typer.Exit) as raised:
        method_flag("magic")
    assert raised.value.exit_code == 2
    assert capfd.readouterr().err.startswith("error: unknown method 'magic'")
