"""What every prompt shows about the task, and the shared prompt prefix.

All LLM calls of one correction start with the same system message and the
same task block (dialect, schema, issue, SQL and its result); only the tail
differs by purpose. Keeping that prefix byte-identical lets a local model
reuse its KV cache across calls.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field

from acts_sql import prompts
from acts_sql.db.executor import Executor
from acts_sql.db.language import database_dialect
from acts_sql.db.result import ExecResult
from acts_sql.llm.base import Message
from acts_sql.llm.prompting import render
from acts_sql.sql.dialects import get_dialect
from acts_sql.sql.languages import plugin_for
from acts_sql.sql.schema_facts import ColumnFact, SchemaFacts, TableFact


class PathStep(BaseModel):
    """One executed node on the path from the root to the current node."""

    node_id: str
    tool: str
    description: str = ""
    input: dict[str, Any] = Field(default_factory=dict)
    summary: str = ""


class LanguageBrief(BaseModel):
    """A query language other than SQL as the prompts present it (`language_brief`)."""

    name: str
    display_name: str
    database: str
    """Display name of the database it runs on ("DuckDB")."""
    fence: str
    """Tag of its code blocks ("prql")."""
    reference: str
    unavailable_tools: dict[str, str] = {}

    def block(self) -> str:
        """The language section of the task block."""
        unavailable = "".join(
            f"Tool {tool} is not available for {self.display_name}: {why}.\n"
            for tool, why in self.unavailable_tools.items()
        )
        return render(
            prompts.template("language.txt"),
            language=self.display_name,
            database=self.database,
            fence=self.fence,
            unavailable=unavailable.rstrip("\n"),
            reference=self.reference.strip() or "(none)",
        ).strip()


def language_brief(executor: Executor) -> LanguageBrief | None:
    """The brief of the query language `executor` runs (a plugin such as PRQL, see
    `acts_sql.db.language`); None for SQL, whose prompts stay as they are."""
    chosen = plugin_for(executor.dialect)
    if chosen is None:
        return None
    return LanguageBrief(
        name=chosen.name,
        display_name=chosen.display_name,
        database=get_dialect(database_dialect(executor)).display_name,
        fence=chosen.fence,
        reference=chosen.reference,
        unavailable_tools=dict(chosen.unavailable_tools),
    )


class TaskContext(BaseModel):
    """The correction task as the prompts see it."""

    dialect: str
    """The dialect of the SQL, or the name of the query language (PRQL) it is written in."""
    question: str
    original_sql: str
    original_result: ExecResult | None = None
    schema_text: str
    schema_names: dict[str, list[str]] = {}
    """Table name -> column names, for identifier repair and nearest-name hints."""
    schema_facts: SchemaFacts = SchemaFacts()
    """Typed columns and foreign keys, for the repair rules (`acts_sql.sql.rules`)."""
    execution_visible: bool = True
    language: LanguageBrief | None = None
    """A query language other than SQL: its section closes the task block (None: SQL)."""
    tool_list: str
    """The system message's tool list, rendered from the tool registry
    (`acts_sql.tools.registry.tool_list`; the prompts do not import the tools)."""

    def facts(self) -> SchemaFacts:
        """`schema_facts`, or (when only names are known) the names without types."""
        if self.schema_facts.tables or not self.schema_names:
            return self.schema_facts
        return SchemaFacts(
            tables=[
                TableFact(name=table, columns=[ColumnFact(name=c) for c in columns])
                for table, columns in self.schema_names.items()
            ]
        )

    def task_block(self) -> str:
        if self.original_result is None or not self.execution_visible:
            result = "(not shown)"
        else:
            result = self.original_result.summary()
        block = render(
            prompts.template("task.txt"),
            dialect=self.dialect,
            schema=self.schema_text.strip(),
            question=self.question.strip(),
            sql=self.original_sql.strip() or "(none)",
            result=result,
        )
        if self.language is None:
            return block
        return block.rstrip() + "\n\n" + self.language.block()


SQL_REPLY_MIN_TOKENS = 256
SQL_REPLY_MAX_TOKENS = 1024


def sql_reply_cap(*sqls: str) -> int:
    """Tokens a reply that rewrites SQL may take: about twice the longest SQL it starts
    from (3 characters a token) plus room for the JSON and a one-sentence rationale, within
    [256, 1024]. A weak model that runs on (a list that never ends, a repetition the guard
    cannot see) stops there, not after 1024 tokens of a 60-token statement."""
    longest = max((len(s) for s in sqls), default=0)
    return max(SQL_REPLY_MIN_TOKENS, min(SQL_REPLY_MAX_TOKENS, 2 * longest // 3 + 128))


def system_message(tool_list: str) -> Message:
    """The system message: the task overview, the tools (`tool_list`) and the rules."""
    text = render(prompts.template("system.txt"), tools=tool_list)
    return Message(role="system", content=text.strip())


def task_messages(task: TaskContext, tail: str) -> list[Message]:
    """System message + task block + purpose-specific tail, in one user turn."""
    return [
        system_message(task.tool_list),
        Message(role="user", content=task.task_block() + "\n\n" + tail.strip()),
    ]


def format_path(steps: list[PathStep]) -> str:
    """The evidence on a path, one block per executed node, for prompts."""
    if not steps:
        return "(nothing executed yet)"
    blocks = []
    for step in steps:
        head = f"[{step.node_id}] {step.tool}"
        if step.description:
            head += f" - {step.description}"
        if step.input:
            head += f"\n  input: {json.dumps(step.input, ensure_ascii=False)}"
        body = "\n".join("  " + line for line in step.summary.splitlines()) or "  (no result)"
        blocks.append(head + "\n" + body)
    return "\n".join(blocks)
