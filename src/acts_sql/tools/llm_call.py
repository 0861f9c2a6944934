"""One structured LLM call of a tool: prompt from a template, JSON reply."""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel

from acts_sql.llm.base import LLMRequest
from acts_sql.llm.prompting import load_template, render
from acts_sql.llm.structured import StructuredReply, ask_json
from acts_sql.tools.base import ToolEnv
from acts_sql.tools.context import task_messages

M = TypeVar("M", bound=BaseModel)


def ask_tool_llm(
    env: ToolEnv, purpose: str, template: str, model: type[M], **values: str
) -> StructuredReply[M]:
    """Render `prompts/<template>` after the shared task prefix and ask for JSON."""
    tail = render(load_template("acts_sql.tools", f"prompts/{template}"), **values)
    request = LLMRequest(purpose=purpose, messages=task_messages(env.task, tail))
    return ask_json(env.llm, request, model, retries=env.json_retries)
