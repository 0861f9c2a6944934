"""The Central Agent: writes the plan, chooses among branches, judges candidates.

Each decision is one structured LLM call whose prompt is the shared task
prefix (see `acts_sql.tools.context`) plus a purpose template from
`prompts/`. Replies are validated against the protocol models and, through
the `validate` callbacks the engine passes, against the current tree; a
reply that fails is re-asked a bounded number of times, then the decision is
returned as failed (`StructuredReply.value is None`) with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from pydantic import BaseModel

from acts_sql.llm.base import LLMBackend, LLMRequest
from acts_sql.llm.prompting import load_template, render
from acts_sql.llm.structured import StructuredReply, ask_json
from acts_sql.protocol import ChooseDecision, JudgeDecision, Plan, Purpose
from acts_sql.tools.context import TaskContext, task_messages

M = TypeVar("M", bound=BaseModel)

_PACKAGE = "acts_sql.agent"


class CentralAgent:
    """Decisions of one correction, made by one LLM backend."""

    def __init__(self, llm: LLMBackend, task: TaskContext, *, json_retries: int = 2) -> None:
        self.llm = llm
        self.task = task
        self.json_retries = json_retries

    def _ask(
        self,
        purpose: str,
        template: str,
        model: type[M],
        validate: Callable[[M], str | None] | None,
        **values: str,
    ) -> StructuredReply[M]:
        tail = render(load_template(_PACKAGE, f"prompts/{template}"), **values)
        request = LLMRequest(purpose=purpose, messages=task_messages(self.task, tail))
        return ask_json(self.llm, request, model, validate=validate, retries=self.json_retries)

    def plan(
        self, tools: list[str], validate: Callable[[Plan], str | None]
    ) -> StructuredReply[Plan]:
        return self._ask(Purpose.PLAN, "plan.txt", Plan, validate, tools=", ".join(tools))

    def choose(
        self,
        plan_json: str,
        node_id: str,
        options: str,
        validate: Callable[[ChooseDecision], str | None],
    ) -> StructuredReply[ChooseDecision]:
        return self._ask(
            Purpose.CHOOSE,
            "choose.txt",
            ChooseDecision,
            validate,
            plan=plan_json,
            node=node_id,
            options=options,
        )

    def judge(
        self,
        plan_json: str,
        node_id: str,
        path: str,
        sql: str,
        result: str,
        validate: Callable[[JudgeDecision], str | None],
    ) -> StructuredReply[JudgeDecision]:
        return self._ask(
            Purpose.JUDGE,
            "judge.txt",
            JudgeDecision,
            validate,
            plan=plan_json,
            node=node_id,
            path=path,
            sql=sql,
            result=result,
        )
