"""One structured LLM call of a tool: prompt from a template, JSON reply."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Generic, Protocol, TypeVar, cast

from pydantic import BaseModel

from acts_sql import prompts
from acts_sql.llm.base import AvoidValues, LLMRequest
from acts_sql.llm.prompting import render
from acts_sql.llm.structured import StructuredReply, ask_json
from acts_sql.prompts.context import sql_reply_cap, task_messages
from acts_sql.tools.base import SampleLedger, ToolEnv

M = TypeVar("M", bound=BaseModel)


class _HasSql(Protocol):
    sql: str


S = TypeVar("S", bound=BaseModel)

REPEAT_TEMPERATURE = 0.7
"""The least temperature of a greedy prompt asked again (it becomes a sample)."""


def ask_tool_llm(
    env: ToolEnv,
    purpose: str,
    template: str,
    model: type[M],
    *,
    temperature: float = 0.0,
    seed: int | None = None,
    retries: int | None = None,
    max_tokens: int | None = None,
    **values: str,
) -> StructuredReply[M]:
    """Render the template `template` (`acts_sql.prompts`) after the shared task prefix and
    ask for JSON.

    `temperature` and `seed` select a sample (a pool's greedy answer has
    temperature 0); `retries` defaults to the run's JSON re-asks; `max_tokens`
    caps the reply (default: the request's).
    """
    request = tool_request(
        env,
        purpose,
        template,
        model,
        temperature=temperature,
        seed=seed,
        max_tokens=max_tokens,
        **values,
    )
    return ask_json(
        env.llm, request, model, retries=env.json_retries if retries is None else retries
    )


def tool_request(
    env: ToolEnv,
    purpose: str,
    template: str,
    model: type[BaseModel],
    *,
    temperature: float = 0.0,
    seed: int | None = None,
    max_tokens: int | None = None,
    **values: str,
) -> LLMRequest:
    """The request `ask_tool_llm` sends first (its schema: `model`'s)."""
    tail = render(prompts.template(template), **values)
    request = LLMRequest(
        purpose=purpose,
        messages=task_messages(env.task, tail),
        temperature=temperature,
        seed=seed,
        json_schema=model.model_json_schema(),
    )
    if max_tokens is not None:
        request = request.model_copy(update={"max_tokens": max_tokens})
    return request


class SqlAsker(Generic[S]):
    """A pool's way to ask for one candidate: one structured call per call of it.

    Called with (temperature, seed, avoid): the greedy answer (temperature 0)
    is re-asked on a bad reply as often as the run allows, a sample is not; an
    `avoid` note (a SQL not to repeat) is added to the prompt's `notes`. Keeps
    the errors of failed replies and every reply by its SQL. Each reply is
    capped by `sql_reply_cap` of the SQL it starts from (`based_on`: the
    statement being repaired, or the user's SQL).
    """

    def __init__(
        self,
        env: ToolEnv,
        purpose: str,
        template: str,
        model: type[S],
        *,
        notes: str = "",
        based_on: str | None = None,
        **values: str,
    ) -> None:
        self.env, self.purpose, self.template, self.model = env, purpose, template, model
        self.notes, self.values = notes, values
        starts = [env.task.original_sql] if based_on is None else [based_on]
        self.max_tokens = sql_reply_cap(*starts)
        self.errors: list[str] = []
        self.replies: dict[str, S] = {}

    def __call__(
        self, temperature: float, seed: int, avoid: str, dropped: Sequence[str] = ()
    ) -> str | None:
        """One candidate. `seed` is the pool's index of the draw; the actual seed
        comes from the run's ledger (unique per run), and a greedy prompt already
        asked in this run becomes a sample (see `SampleLedger`). `dropped`: SQL the
        reply should not be (the request's ``avoid``)."""
        request = self._request(temperature, avoid, self.env.draws, dropped)
        reply = ask_json(
            self.env.llm,
            request,
            self.model,
            retries=self.env.json_retries if request.temperature == 0 else 0,
        )
        if reply.value is None:
            self.errors.append(reply.error or "no reply")
            return None
        sql = cast(_HasSql, reply.value).sql
        self.replies.setdefault(sql.strip().rstrip(";").strip(), reply.value)
        return sql

    def preview(
        self, draws: list[tuple[float, str]], dropped: Sequence[str] = ()
    ) -> list[LLMRequest]:
        """The requests of the draws (temperature, avoid note) asked in this order, without
        taking seeds or greedy prompts from the run's ledger: a pool sends them ahead."""
        ledger = self.env.draws.copy()
        return [self._request(temperature, avoid, ledger, dropped) for temperature, avoid in draws]

    def _request(
        self, temperature: float, avoid: str, draws: SampleLedger, dropped: Sequence[str] = ()
    ) -> LLMRequest:
        notes = "\n".join(n for n in (self.notes, avoid) if n) or "(none)"
        if temperature == 0 and not draws.first_greedy(self._key(notes)):
            temperature = max(self.env.pool.temperature, REPEAT_TEMPERATURE)
        return tool_request(
            self.env,
            self.purpose,
            self.template,
            self.model,
            temperature=temperature,
            seed=draws.next_seed() if temperature > 0 else None,
            max_tokens=self.max_tokens,
            notes=notes,
            **self.values,
        ).model_copy(update={"avoid": AvoidValues(values=list(dropped)) if dropped else None})

    def _key(self, notes: str) -> str:
        return json.dumps([self.purpose, self.template, notes, self.values], sort_keys=True)

    @property
    def last_error(self) -> str:
        return self.errors[-1] if self.errors else "no reply"
