"""The Central Agent: writes the plan, chooses among branches, judges candidates.

Each decision is one structured LLM call whose prompt is the shared task
prefix (see `acts_sql.prompts.context`) plus a purpose template from
`acts_sql.prompts`. Replies are validated against the protocol models and, through
the `validate` callbacks the engine passes, against the current tree; a
reply that fails is re-asked a bounded number of times, then the decision is
returned as failed (`StructuredReply.value is None`) with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

from acts_sql import prompts
from acts_sql.llm.base import LLMBackend, LLMRequest
from acts_sql.llm.prompting import render
from acts_sql.llm.structured import StructuredReply, ask_json
from acts_sql.prompts.context import TaskContext, task_messages
from acts_sql.protocol import ChooseDecision, JudgeDecision, Plan, Purpose

M = TypeVar("M", bound=BaseModel)

PLAN_MAX_TOKENS = 640
"""A plan of 2-5 nodes fits easily; a weak model that pastes the issue into every
node's input is cut off here (the JSON repair closes what is left open)."""
DECISION_MAX_TOKENS = 384
"""A choice or a verdict with its reason."""
PLAN_MAX_NODES = 6
REASON_CHARS = {"choose": 240, "judge": 400}
"""How long a reason may be in the schema sent to the model: a reason is a sentence or two,
and a weak model that loops inside one would otherwise never reach the fields after it."""
DESCRIPTION_CHARS = 120
INPUT_CHARS = 600


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
        *,
        schema: dict[str, Any] | None = None,
        retries: int | None = None,
        max_tokens: int = DECISION_MAX_TOKENS,
        **values: str,
    ) -> StructuredReply[M]:
        tail = render(prompts.template(template), **values)
        request = LLMRequest(
            purpose=purpose,
            messages=task_messages(self.task, tail),
            json_schema=schema,
            max_tokens=max_tokens,
        )
        return ask_json(
            self.llm,
            request,
            model,
            validate=validate,
            retries=self.json_retries if retries is None else retries,
        )

    def plan(
        self,
        tools: list[str],
        validate: Callable[[Plan], str | None],
        previous: str = "",
    ) -> StructuredReply[Plan]:
        """The revision plan; `previous` lists the branches an earlier plan lost (re-plan)."""
        return self._ask(
            Purpose.PLAN,
            "plan.txt",
            Plan,
            validate,
            schema=plan_schema(tools),
            max_tokens=PLAN_MAX_TOKENS,
            tools=", ".join(tools),
            previous=previous or "(none: this is the first plan)",
        )

    def choose(
        self, plan: str, node_id: str, options: str, ids: list[str]
    ) -> StructuredReply[ChooseDecision]:
        """One of `ids`. No re-ask: an invalid choice costs no second call (the engine
        then follows the first untried child); a schema-constrained backend can only
        name one of `ids`."""
        return self._ask(
            Purpose.CHOOSE,
            "choose.txt",
            ChooseDecision,
            lambda d: None if d.cursor in ids else f"cursor {d.cursor!r} is not one of {ids}",
            schema=choose_schema(ids),
            retries=0,
            plan=plan,
            node=node_id,
            options=options,
        )

    def judge(
        self,
        *,
        plan: str,
        node_id: str,
        path: str,
        groups: str,
        labels: list[str],
        targets: list[str],
        validate: Callable[[JudgeDecision], str | None],
    ) -> StructuredReply[JudgeDecision]:
        """A verdict on the result groups `labels` (A, B, ...) of one node's candidates."""
        return self._ask(
            Purpose.JUDGE,
            "judge.txt",
            JudgeDecision,
            validate,
            schema=judge_schema(labels, targets),
            plan=plan,
            node=node_id,
            path=path,
            groups=groups,
            labels=" or ".join(f'"{label}"' for label in labels),
        )


def judge_instructions() -> str:
    """The judge prompt's own words (its template): a reason that only repeats them says
    nothing of the candidate (`acts_sql.agent.consistency.copied_from`)."""
    return str(prompts.template("judge.txt"))


def plan_schema(tools: list[str]) -> dict[str, Any]:
    """Plan's schema, bounded for the model: at most PLAN_MAX_NODES nodes, each with one of
    the enabled `tools`, a short description and string inputs of bounded length. The
    engine still validates and repairs what comes back (`engine/tree.py`)."""
    node = {
        "type": "object",
        "properties": {
            "id": {"type": "string", "maxLength": 16},
            "description": {"type": "string", "maxLength": DESCRIPTION_CHARS},
            "tool": {"type": "string", "enum": list(tools)},
            "input": {
                "type": "object",
                "additionalProperties": {"type": "string", "maxLength": INPUT_CHARS},
            },
            "children": {
                "type": "array",
                "items": {"type": "string", "maxLength": 16},
                "maxItems": 3,
            },
        },
        "required": ["id", "description", "tool", "input", "children"],
    }
    return {
        "title": "Plan",
        "description": Plan.__doc__ or "",
        "type": "object",
        "properties": {
            "cursor": {"type": "string", "maxLength": 16},
            "nodes": {"type": "array", "items": node, "minItems": 1, "maxItems": PLAN_MAX_NODES},
        },
        "required": ["cursor", "nodes"],
    }


def choose_schema(ids: list[str]) -> dict[str, Any]:
    """ChooseDecision's schema with the cursor limited to the open branches."""
    schema = ChooseDecision.model_json_schema()
    schema["properties"]["reason"]["maxLength"] = REASON_CHARS["choose"]
    schema["properties"]["cursor"] = {"type": "string", "enum": list(ids)}
    return schema


def judge_schema(labels: list[str], targets: list[str]) -> dict[str, Any]:
    """JudgeDecision's schema with the group limited to the labels shown and the
    backtrack target to executed nodes. A model that writes JSON from it writes
    reason, verdict, group and backtrack_to in that order; new_nodes is optional."""
    schema = JudgeDecision.model_json_schema()
    props = schema["properties"]
    props["reason"]["maxLength"] = REASON_CHARS["judge"]
    props["group"] = {"anyOf": [{"type": "string", "enum": list(labels)}, {"type": "null"}]}
    props["backtrack_to"] = (
        {"anyOf": [{"type": "string", "enum": list(targets)}, {"type": "null"}]}
        if targets
        else {"type": "null"}
    )
    schema["required"] = ["reason", "verdict", "group", "backtrack_to"]
    return schema
