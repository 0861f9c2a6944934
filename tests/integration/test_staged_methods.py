"""`dac` and `maplerepair` end to end, scripted LLM, on SQLite, PostgreSQL and MariaDB.

The data set (live.py): customers(id, name, city) with Ana/Lisbon, Ben/NULL,
Chloe/Oslo; orders(id, customer_id -> customers.id, total, placed_at).
"""

from __future__ import annotations

from live import Engine

from acts_sql import CorrectionOptions, correct
from support import scripted


def _city_value(value: str) -> dict[str, str]:
    """An entity link of the phrase "Oslo" to a value of customers.city, spelled `value`."""
    return {
        "phrase": "Oslo",
        "kind": "value",
        "table": "customers",
        "column": "city",
        "value": value,
    }


def _fired(result) -> list[tuple[str, str]]:
    return [(e.data["rule"], e.data["status"]) for e in result.trace if e.kind == "rule_fired"]


def test_maplerepair_fixes_a_misspelt_column_and_equals_null_without_the_llm(engine: Engine):
    llm = scripted({})  # any LLM call would fail: the script is empty
    result = correct(
        engine.url,
        "Which customers have no city?",
        "SELECT nme FROM customers WHERE city = NULL",
        llm=llm,
        options=CorrectionOptions(method="maplerepair"),
    )

    assert result.accepted is True
    assert result.usage.llm_calls == 0
    assert result.result is not None and result.result.rows == [["Ben"]]
    fired = _fired(result)
    assert ("unknown_identifier", "repaired") in fired
    assert ("equals_null", "repaired") in fired
    assert "nme" not in result.sql and "IS NULL" in result.sql.upper()


def test_maplerepair_joins_the_table_a_column_belongs_to(engine: Engine):
    result = correct(
        engine.url,
        "Names and order totals over 100",
        "SELECT name, total FROM customers WHERE total > 100",
        llm=scripted({}),
        options=CorrectionOptions(method="maplerepair"),
    )

    assert result.accepted is True and result.usage.llm_calls == 0
    assert ("missing_join", "repaired") in _fired(result)
    assert sorted(result.result.rows) == [["Ana", 150], ["Ben", 999.99]] or sorted(
        [r[0], float(r[1])] for r in result.result.rows
    ) == [["Ana", 150.0], ["Ben", 999.99]]


def test_maplerepair_asks_the_llm_only_for_what_the_rules_leave(engine: Engine):
    fixed = "SELECT name FROM customers WHERE city = 'Oslo'"
    llm = scripted({"correct": [f"The function does not exist.\n```sql\n{fixed}\n```"]})
    result = correct(
        engine.url,
        "Who lives in Oslo?",
        "SELECT name FROM customers WHERE no_such_fn(city) = 'Oslo'",
        llm=llm,
        options=CorrectionOptions(method="maplerepair"),
    )

    assert result.accepted is True and result.sql == fixed
    assert result.usage.llm_calls == 1
    assert result.result.rows == [["Chloe"]]
    prompt = llm.prompts("correct")[0]
    assert "[execution_failure] The statement fails to execute" in prompt
    assert "no_such_fn" in prompt
    assert ("execution_failure", "hint") in _fired(result)
    assert [e.data["ok"] for e in result.trace if e.kind == "llm_repair"] == [True]


def test_maplerepair_returns_what_neither_rules_nor_llm_repair_unchanged(engine: Engine):
    user = "SELECT name FROM customers WHERE no_such_fn(city) = 'Oslo'"
    llm = scripted({"correct": ["```sql\nSELECT still_no_fn(city) FROM customers\n```"]})
    result = correct(
        engine.url,
        "Who lives in Oslo?",
        user,
        llm=llm,
        options=CorrectionOptions(method="maplerepair"),
    )

    assert result.accepted is False
    assert result.sql == user
    assert "neither the rules nor the LLM repairer" in result.reason


def test_dac_feeds_a_linked_value_back_and_keeps_the_correction(engine: Engine):
    fixed = "SELECT name FROM customers WHERE city = 'Oslo'"
    llm = scripted(
        {
            "link_entities": [
                {
                    "links": [
                        _city_value("oslo"),
                        {"phrase": "customers", "kind": "table", "table": "Customers"},
                        {
                            "phrase": "planet",
                            "kind": "column",
                            "table": "customers",
                            "column": "planet",
                        },
                    ]
                }
            ],
            "sketch": ["```sql\nSELECT name FROM people WHERE town = 'Oslo'\n```"],
            "correct": [f"```sql\n{fixed}\n```"],
        }
    )
    result = correct(
        engine.url,
        "Who lives in Oslo?",
        "SELECT name FROM customers WHERE city = 'Olso'",
        llm=llm,
        options=CorrectionOptions(method="dac"),
    )

    assert result.accepted is True and result.sql == fixed
    assert result.result.rows == [["Chloe"]]
    assert [r.purpose for r in llm.requests] == ["link_entities", "sketch", "correct"]
    feedback = llm.prompts("correct")[0]
    # the value as the database spells it (MariaDB compares without case: 'oslo' is found
    # as written); the column the schema lacks is not fed back
    spelled = "oslo" if engine.name == "mysql" else "Oslo"
    assert (
        f"the issue mentions the value '{spelled}', which is stored in customers.city" in feedback
    )
    assert "planet" not in feedback
    # the sketch has the SQL's own skeleton: no skeleton feedback
    assert "skeleton could be like" not in feedback
    # the sketch is written from the question alone: no schema, no SQL
    sketch_prompt = llm.prompts("sketch")[0]
    assert "CREATE TABLE" not in sketch_prompt and "Olso" not in sketch_prompt


def test_dac_uses_its_execution_error_prompt_when_the_sql_fails(engine: Engine):
    llm = scripted(
        {
            "link_entities": [{"links": []}],
            "sketch": ["```sql\nSELECT name FROM customers\n```"],
            "correct": ["```sql\nSELECT name FROM customers ORDER BY name\n```"],
        }
    )
    result = correct(
        engine.url,
        "All customer names",
        "SELECT nme FROM customers",
        llm=llm,
        options=CorrectionOptions(method="dac"),
    )

    assert result.accepted is True
    assert result.result.rows == [["Ana"], ["Ben"], ["Chloe"]]
    prompt = llm.prompts("correct")[0]
    assert "this SQL fails when it runs" in prompt and "nme" in prompt
    assert result.usage.llm_calls == 3


def test_dac_drops_a_correction_that_adds_structure(engine: Engine):
    llm = scripted(
        {
            "link_entities": [
                {
                    "links": [
                        {"phrase": "city", "kind": "column", "table": "customers", "column": "city"}
                    ]
                }
            ],
            "sketch": ["```sql\nSELECT name FROM customers\n```"],
            "correct": ["```sql\nSELECT name FROM customers WHERE city IS NOT NULL\n```"],
        }
    )
    user = "SELECT name FROM customers"
    result = correct(
        engine.url,
        "Customers and their city",
        user,
        llm=llm,
        options=CorrectionOptions(method="dac"),
    )

    assert 'the issue mentions the columns "customers.city"' in llm.prompts("correct")[0]
    assert result.accepted is False and result.sql == user  # DAC's skeleton guard
    dropped = [e.summary for e in result.trace if e.kind == "dac_dropped"]
    assert dropped and "skeleton is longer" in dropped[0]


def test_dac_whose_correction_is_the_users_sql_says_so_and_accepts_nothing(engine: Engine):
    user = "SELECT name FROM customers WHERE city = 'Olso'"
    llm = scripted(
        {
            "link_entities": [{"links": [_city_value("Oslo")]}],
            "sketch": ["```sql\nSELECT name FROM customers WHERE city = 'Oslo'\n```"],
            # the feedback was given, and the model hands the SQL back, reformatted
            "correct": ["```sql\nselect name\nfrom customers\nwhere city = 'Olso'\n```"],
        }
    )
    result = correct(
        engine.url, "Who lives in Oslo?", user, llm=llm, options=CorrectionOptions(method="dac")
    )

    assert [r.purpose for r in llm.requests] == ["link_entities", "sketch", "correct"]
    assert result.accepted is False and result.sql == user
    assert result.reason == (
        "rewritten with the entity and skeleton feedback, and the result is the user's SQL "
        "unchanged: not accepted"
    )
    assert "nothing to correct" not in result.reason
