"""extract_json over a table of damaged LLM outputs (tests/llm/data/damaged_outputs.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acts_sql.errors import ActsSqlError
from acts_sql.llm.jsonrepair import JsonExtractionError, extract_json, parse_json_object

CASES: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "data" / "damaged_outputs.json").read_text(encoding="utf-8")
)
REPAIRABLE = [case for case in CASES if "expect" in case]
HOPELESS = [case for case in CASES if "error" in case]


def test_fixture_table_covers_the_kinds_of_damage() -> None:
    ids = {case["id"] for case in CASES}
    for needed in (
        "json_fence",
        "prose_around",
        "trailing_commas",
        "truncated_mid_string",
        "truncated_mid_array",
        "python_literals",
        "nothing_json",
    ):
        assert needed in ids


@pytest.mark.parametrize("case", REPAIRABLE, ids=[case["id"] for case in REPAIRABLE])
def test_repairable_output_yields_the_intended_object(case: dict[str, Any]) -> None:
    extraction = parse_json_object(case["reply"])
    assert extraction.value == case["expect"]
    assert extract_json(case["reply"]) == case["expect"]
    if "repairs" in case:
        assert extraction.repairs == case["repairs"]


@pytest.mark.parametrize("case", HOPELESS, ids=[case["id"] for case in HOPELESS])
def test_hopeless_output_raises_a_typed_error_with_a_reason(case: dict[str, Any]) -> None:
    with pytest.raises(JsonExtractionError) as caught:
        extract_json(case["reply"])
    assert case["error"] in caught.value.reason
    assert isinstance(caught.value, ActsSqlError)
    assert "\n" not in str(caught.value)


def test_error_reports_where_the_object_breaks() -> None:
    with pytest.raises(JsonExtractionError) as caught:
        extract_json('{\n  "verdict": "accept",\n  "reason": oops\n}')
    assert "line 3, column 13" in caught.value.reason


def test_objects_nested_in_a_broken_object_are_not_taken_instead() -> None:
    # {"b": 1} parses on its own, but it is part of the broken outer object.
    with pytest.raises(JsonExtractionError):
        extract_json('{"a": {"b": 1}, "c": oops}')


def test_a_later_object_after_a_prose_brace_is_found() -> None:
    reply = 'Filter on {category}. Answer: {"sql": "SELECT 1"}'
    assert extract_json(reply) == {"sql": "SELECT 1"}


def test_unicode_escapes_and_unknown_escapes() -> None:
    assert extract_json("{'name': 'caf\\u00e9', 'path': 'C:\\dir'}") == {
        "name": "café",
        "path": "C:\\dir",
    }


def test_numbers_keep_their_type() -> None:
    assert extract_json("{'n': 3, 'x': -1.5, 'e': 2e3, 'm': .5,}") == {
        "n": 3,
        "x": -1.5,
        "e": 2000.0,
        "m": 0.5,
    }
