"""`acts_sql.correct` refuses empty SQL and inputs above the documented limits before it
opens the database or sets up the LLM (issue 37); `fix`, `batch` and the service all go
through it."""

from __future__ import annotations

import pytest

from acts_sql import correct
from acts_sql.engine.inputs import MAX_QUESTION_CHARS, MAX_SQL_CHARS, checked_inputs
from acts_sql.errors import ConfigError, InputTooLargeError

NOWHERE = "sqlite:////no/such/dir/db.sqlite"
"""A database that cannot be opened: reaching it would be a DatabaseOpenError."""
NO_LLM = "scripted:/no/such/script.json"


@pytest.mark.parametrize(
    ("question", "sql", "error", "said"),
    [
        ("q", "", ConfigError, "the SQL is empty"),
        ("q", " \n\t", ConfigError, "the SQL is empty"),
        ("", None, ConfigError, "nothing to do"),
        ("q", "x" * (MAX_SQL_CHARS + 1), InputTooLargeError, f"at most {MAX_SQL_CHARS:,}"),
        ("q" * (MAX_QUESTION_CHARS + 1), "SELECT 1", InputTooLargeError, "the question"),
    ],
    ids=["empty-sql", "blank-sql", "nothing", "sql-too-large", "question-too-large"],
)
def test_bad_inputs_are_refused_before_the_database_or_the_llm(question, sql, error, said):
    with pytest.raises(error) as caught:
        correct(NOWHERE, question, sql, llm=NO_LLM)
    assert said in str(caught.value)


def test_at_the_limits_the_inputs_are_taken_stripped():
    sql = " SELECT 1 -- " + "x" * (MAX_SQL_CHARS - 13)
    assert len(sql) == MAX_SQL_CHARS
    question, kept = checked_inputs(" q ", sql)
    assert question == "q" and kept == sql.strip()
    assert checked_inputs("q" * MAX_QUESTION_CHARS, None) == ("q" * MAX_QUESTION_CHARS, None)
