"""Single-call prompts: text-to-SQL, the critic baseline, the raw baseline.

- `text_to_sql`: writes the initial SQL from the question (text-to-SQL mode).
- `critique_and_rewrite`: the `critic` method, one call that critiques the
  SQL and rewrites it, as JSON.
- `raw_correction`: the `raw` method, single-turn correction in the shape of
  the BIRD-CRITIC baseline prompt; every ```sql block of the reply becomes a
  statement.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from acts_sql import prompts
from acts_sql.db.result import ExecResult
from acts_sql.llm.base import LLMBackend, LLMRequest, LLMResponse, Message
from acts_sql.llm.prompting import render
from acts_sql.llm.structured import StructuredReply, ask_json
from acts_sql.prompts.context import TaskContext, task_messages
from acts_sql.protocol import GeneratedSql, Purpose
from acts_sql.sql.diagnostics import split_sql

_SQL_BLOCK = re.compile(r"```[ \t]*sql[^\n]*\n(.*?)(?:```|$)", re.IGNORECASE | re.DOTALL)
_BLOCK = r"```[ \t]*(?:{tags})\b[^\n]*\n(.*?)(?:```|$)"


class CriticReply(BaseModel):
    critique: str = ""
    sql: str


def text_to_sql(
    llm: LLMBackend,
    task: TaskContext,
    retries: int = 2,
    *,
    temperature: float = 0.0,
    seed: int | None = None,
) -> StructuredReply[GeneratedSql]:
    """The question's query, written from the question and the schema alone (greedy by
    default; a sample at `temperature` with `seed`)."""
    # "the SQL" for SQL (as before); for another language its own name: the 0.5B wrote SQL
    # for all 60 PRQL log questions when this line asked for "the SQL"
    query = f"{task.language.display_name} query" if task.language is not None else "SQL"
    tail = render(prompts.template("text_to_sql.txt"), query=query)
    request = LLMRequest(
        purpose=Purpose.GENERATE_SQL,
        messages=task_messages(task, tail),
        temperature=temperature,
        seed=seed,
    )
    return ask_json(llm, request, GeneratedSql, retries=retries)


def critique_and_rewrite(
    llm: LLMBackend, task: TaskContext, retries: int = 2
) -> StructuredReply[CriticReply]:
    tail = prompts.template("critic.txt")
    request = LLMRequest(purpose=Purpose.CORRECT, messages=task_messages(task, tail))
    return ask_json(llm, request, CriticReply, retries=retries)


def raw_correction(
    llm: LLMBackend,
    task: TaskContext,
    *,
    max_tokens: int = 2048,
    temperature: float = 0.0,
    seed: int | None = None,
    error: str | None = None,
    rows: ExecResult | None = None,
    prose_after: bool = True,
) -> tuple[list[str], LLMResponse]:
    """The BIRD-CRITIC baseline prompt, one call; the reply's ```sql blocks.

    The `raw` method calls it once, greedily; `vote` and the acts pools call it
    with `temperature` and a `seed` per sample. For a query language other than
    SQL (`task.language`) the prompt asks for that language, with its reference,
    and the reply's last block tagged with its fence (or ```sql) is the query.
    `error`: the database's error for the issue SQL, told to the model after the
    SQL (`error_note`; without it the prompt is the baseline's, byte for byte).
    `rows`: the issue SQL's result when it runs and the issue says it is wrong, told in the
    same place (`rows_note`; ignored when `error` is given).
    `prose_after` False: the reply may end once it has as many ```sql blocks as the issue
    SQL has statements (`solution_blocks`), without the prose a model writes after them
    (the engine's samples); the raw rewrite and the baselines keep their replies whole.
    """
    prompt = _raw_prompt(task, error, rows)
    request = LLMRequest(
        purpose=Purpose.CORRECT,
        messages=[Message(role="user", content=prompt)],
        max_tokens=max_tokens,
        temperature=temperature,
        seed=seed,
        enough_blocks=None if prose_after else solution_blocks(task),
    )
    response = llm.complete(request)
    if task.language is None:
        return sql_blocks(response.text), response
    # one query, not a list of statements: the last block (a reply that quotes the
    # user's query first puts its correction after it)
    return sql_blocks(response.text, (task.language.fence, "sql"))[-1:], response


def solution_blocks(task: TaskContext) -> int | None:
    """How many ```sql blocks complete a raw reply: the issue SQL's statements. None for a
    query language other than SQL (a reply may quote the user's query before its own) or
    when there is no issue SQL."""
    if task.language is not None or not task.original_sql.strip():
        return None
    return len(split_sql(task.original_sql, task.dialect)) or None


ERROR_NOTE_CHARS = 400
"""The most of a database error the raw prompt quotes."""


def error_note(error: str | None) -> str:
    """The paragraph the raw prompt gets for the issue SQL's error ("" for none): the
    database's own words, cut to `ERROR_NOTE_CHARS`."""
    text = (error or "").strip()
    if not text:
        return ""
    if len(text) > ERROR_NOTE_CHARS:
        text = text[:ERROR_NOTE_CHARS].rstrip() + " ..."
    return f"Running the issue SQL on the database fails with:\n{text}\n\n"


ROWS_NOTE_ROWS = 5
"""The most rows of the issue SQL's result the raw prompt quotes."""


def rows_note(result: ExecResult | None) -> str:
    """The paragraph the raw prompt gets for the rows the issue SQL returns, which the issue
    says are wrong ("" for none, or for a result that is not a result set): its columns and
    first `ROWS_NOTE_ROWS` rows, as the engine's traces write them."""
    if result is None or not result.ok or not result.columns:
        return ""
    shown = result.summary(max_rows=ROWS_NOTE_ROWS).removeprefix("ok: ")
    said = "The user says this is wrong."
    return f"Running the issue SQL on the database returns {shown}\n{said}\n\n"


def _raw_prompt(task: TaskContext, error: str | None = None, rows: ExecResult | None = None) -> str:
    values = {
        "schema": task.schema_text.strip(),
        "question": task.question.strip(),
        "sql": task.original_sql.strip(),
    }
    if task.language is None:
        return render(
            prompts.template("raw_baseline.txt"),
            dialect=task.dialect,
            error_note=error_note(error) or rows_note(rows),
            **values,
        )
    return render(
        prompts.template("raw_baseline_language.txt"),
        language=task.language.display_name,
        database=task.language.database,
        reference=task.language.reference.strip() or "(none)",
        fence=task.language.fence,
        **values,
    )


def sql_blocks(text: str, fences: tuple[str, ...] = ("sql",)) -> list[str]:
    """Every ```sql block's statement (or of the blocks tagged with one of `fences`), in
    order (an unclosed last block counts)."""
    pattern = (
        _SQL_BLOCK
        if fences == ("sql",)
        else re.compile(
            _BLOCK.format(tags="|".join(re.escape(f) for f in fences)), re.IGNORECASE | re.DOTALL
        )
    )
    statements = (_unlabelled(block).strip().rstrip(";").strip() for block in pattern.findall(text))
    return [statement for statement in statements if statement]


_LABEL = re.compile(
    r"\A(?:[ \t]*(?:--[ \t]*(?:sql[ \t]+)?(?:code[ \t]+block|statement|query|solution)"
    r"(?:[ \t]*\d+)?[ \t]*:?|sql)[ \t]*(?:\r?\n|\Z))+",
    re.IGNORECASE,
)


def _unlabelled(block: str) -> str:
    """A block without the label lines a model writes over it ("-- SQL code block 1",
    "-- Statement 2:"), copied from the prompt's wording, nor a line that is only the
    fence's tag again ("```sql" then "sql"); other comments stay."""
    return _LABEL.sub("", block.lstrip("\r\n"))
