"""DAC's three LLM calls (arXiv 2408.08779, repository zirui-HIT/DAC), in acts-sql's prompts.

- `link_entities`: entity linking, the issue's words aligned with the schema's
  tables, columns and values (purpose `link_entities`, JSON reply), on the
  shared task prompt (schema, issue, SQL and its result);
- `sketch_sql`: skeleton parsing, a SQL written from the question alone, with
  no schema (DAC "hallucinates" one; only its skeleton is used; purpose
  `sketch`, a ```sql block);
- `correct_with_feedback` and `fix_execution_error`: the correction with the
  disagreements as feedback, and DAC's execution-error prompt (purpose
  `correct`, a ```sql block each).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from acts_sql import prompts
from acts_sql.agent.single_call import sql_blocks
from acts_sql.llm.base import LLMBackend, LLMRequest, Message
from acts_sql.llm.prompting import render
from acts_sql.llm.structured import StructuredReply, ask_json
from acts_sql.prompts.context import TaskContext, sql_reply_cap, task_messages
from acts_sql.protocol import Purpose
from acts_sql.sql.entities import Mention

SKETCH_TOKENS = 384


class EntityLink(BaseModel):
    phrase: str = ""
    kind: Literal["table", "column", "value"]
    table: str | None = None
    column: str | None = None
    value: str | int | float | None = None

    def mention(self) -> Mention:
        value = None if self.value is None else str(self.value)
        return Mention(
            phrase=self.phrase, kind=self.kind, table=self.table, column=self.column, value=value
        )


class EntityLinks(BaseModel):
    links: list[EntityLink] = Field(default_factory=list)


def link_entities(
    llm: LLMBackend, task: TaskContext, retries: int = 2
) -> StructuredReply[EntityLinks]:
    tail = prompts.template("dac_link.txt")
    request = LLMRequest(purpose=Purpose.LINK_ENTITIES, messages=task_messages(task, tail))
    return ask_json(llm, request, EntityLinks, retries=retries)


def sketch_sql(llm: LLMBackend, task: TaskContext) -> str | None:
    """A SQL for the question written without the schema; None without a ```sql block."""
    prompt = render(
        prompts.template("dac_sketch.txt"),
        dialect=task.dialect,
        question=task.question.strip(),
    )
    request = LLMRequest(
        purpose=Purpose.SKETCH,
        messages=[Message(role="user", content=prompt)],
        max_tokens=SKETCH_TOKENS,
    )
    blocks = sql_blocks(llm.complete(request).text)
    return blocks[-1] if blocks else None


def correct_with_feedback(llm: LLMBackend, task: TaskContext, feedback: str) -> str | None:
    tail = render(prompts.template("dac_correct.txt"), feedback=feedback, **_written_in(task))
    return _corrected(llm, task, tail, task.original_sql)


def fix_execution_error(llm: LLMBackend, task: TaskContext, sql: str, error: str) -> str | None:
    tail = render(
        prompts.template("dac_error.txt"),
        sql=sql.strip(),
        error=error.strip(),
        **_written_in(task),
    )
    return _corrected(llm, task, tail, sql)


def _written_in(task: TaskContext) -> dict[str, str]:
    """What the reply is written in: the dialect's SQL, or a query language (PRQL)."""
    if task.language is None:
        return {"language": f"{task.dialect} SQL", "fence": "sql"}
    return {"language": f"{task.language.display_name} query", "fence": task.language.fence}


def _corrected(llm: LLMBackend, task: TaskContext, tail: str, based_on: str) -> str | None:
    """The last ```sql block of a correction reply (or, for a query language, of a block
    tagged with its fence or sql); None without one."""
    request = LLMRequest(
        purpose=Purpose.CORRECT,
        messages=task_messages(task, tail),
        max_tokens=sql_reply_cap(based_on) + 192,
    )
    fences = ("sql",) if task.language is None else (task.language.fence, "sql")
    blocks = sql_blocks(llm.complete(request).text, fences)
    return blocks[-1] if blocks else None
