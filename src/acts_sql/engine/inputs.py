"""The limits on what one correction is given, enforced where every caller passes.

`checked_inputs` is called by `acts_sql.correct` (so the command line, the
batch runner and the service all refuse the same inputs); the request models
of the service and the batch input declare the same limits, so a too-large
field is refused there before a run is made.

- The SQL: at most `MAX_SQL_CHARS` characters (250,000, about the service's
  default request body limit). A statement is parsed several times in a run
  (guard, trust checks, canonical forms), each time costing time and memory
  in proportion to its size before any statement timeout applies: a 5.5 MB
  statement took 79 s and 2.3 GB, a 1,000,000-character IN list 16-24 s and
  460 MB; one at the limit is handled in about 5 s and under 250 MB
  (scripts/bench_input_size.py measures it; docs/DATABASES.md has the numbers).
- The question: at most `MAX_QUESTION_CHARS` characters (100,000).
- SQL that is given must say something: empty or whitespace-only SQL is bad
  input, never a silent switch to text-to-SQL mode (which is `sql=None`).
"""

from __future__ import annotations

from acts_sql.errors import ConfigError, InputTooLargeError

MAX_SQL_CHARS = 250_000
MAX_QUESTION_CHARS = 100_000


def check_size(text: str, *, what: str, limit: int) -> None:
    """InputTooLargeError when `text` is longer than `limit` characters."""
    if len(text) > limit:
        raise InputTooLargeError(
            f"{what} is too large: {len(text):,} characters, at most {limit:,} are accepted",
            what=what,
            chars=len(text),
            limit=limit,
        )


def checked_inputs(question: str | None, sql: str | None) -> tuple[str, str | None]:
    """The question and SQL of one correction, stripped; ConfigError for input no run
    should start on (too large, SQL given but empty, nothing to do)."""
    question = question or ""
    check_size(question, what="the question", limit=MAX_QUESTION_CHARS)
    if sql is not None:
        check_size(sql, what="the SQL", limit=MAX_SQL_CHARS)
        if not sql.strip():
            raise ConfigError(
                "the SQL is empty: give a statement to correct, or no SQL at all for "
                "text-to-SQL mode"
            )
    question, sql = question.strip(), sql.strip() if sql is not None else None
    if not question and not sql:
        raise ConfigError("nothing to do: give a question (the issue), a SQL statement, or both")
    return question, sql
