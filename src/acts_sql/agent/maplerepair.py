"""MapleRepair's LLM repairer: the last resort after its rules, in acts-sql's prompt.

One call (purpose `correct`) on the shared task prompt, with the statement as
the rules left it, its result (rows or error) and the hints of the rules that
found an error they could not fix safely. The reply's last ```sql block is
the repair (MapleRepair takes the last block too).
"""

from __future__ import annotations

from acts_sql import prompts
from acts_sql.agent.single_call import sql_blocks
from acts_sql.llm.base import LLMBackend, LLMRequest
from acts_sql.llm.prompting import render
from acts_sql.prompts.context import TaskContext, sql_reply_cap, task_messages
from acts_sql.protocol import Purpose

PROSE_TOKENS = 256
"""Room beyond `sql_reply_cap` for the reasoning the prompt allows around the SQL."""


def repair_with_hints(
    llm: LLMBackend, task: TaskContext, sql: str, result: str, hints: str
) -> str | None:
    """The LLM's repair of `sql`; None when its reply has no ```sql block (or, for a query
    language such as PRQL, no block tagged with its fence or ```sql)."""
    language = task.language
    tail = render(
        prompts.template("maplerepair.txt"),
        sql=sql.strip(),
        result=result.strip(),
        hints=hints.strip() or "(none)",
        label="SQL" if language is None else f"{language.display_name} query",
        fence="sql" if language is None else language.fence,
        language=f"{task.dialect} SQL" if language is None else f"{language.display_name} query",
    )
    request = LLMRequest(
        purpose=Purpose.CORRECT,
        messages=task_messages(task, tail),
        max_tokens=sql_reply_cap(sql) + PROSE_TOKENS,
    )
    fences = ("sql",) if language is None else (language.fence, "sql")
    blocks = sql_blocks(llm.complete(request).text, fences)
    return blocks[-1] if blocks else None
