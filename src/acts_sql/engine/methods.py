"""The correction methods by name: what runs for each `Method` once the task is set up.

`acts` and `linear` are searches (`engine/search.py`, `engine/linear_search.py`); `vote`
counts its own majority (`engine/baselines.py`); the methods without a judge (`critic`,
`raw`, `dac`, `maplerepair`) have their acceptance checked afterwards by `vouched`. A new
method is a function of `MethodRun` added to `METHODS`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from acts_sql.db.executor import Executor
from acts_sql.engine.baselines import run_critic, run_raw, run_vote
from acts_sql.engine.budget import BudgetTracker
from acts_sql.engine.dac import run_dac
from acts_sql.engine.linear_search import LinearSearch
from acts_sql.engine.maplerepair import run_maplerepair
from acts_sql.engine.options import CorrectionOptions, Method
from acts_sql.engine.recording import TracedLLM
from acts_sql.engine.search import SearchOutcome, TreeSearch
from acts_sql.engine.trace import Trace
from acts_sql.engine.trust import TrustContext
from acts_sql.engine.vouch import vouched
from acts_sql.prompts.context import TaskContext
from acts_sql.tools.base import PoolSettings


@dataclass(frozen=True)
class MethodRun:
    """Everything a method reads: the task (its original SQL has run), the traced LLM and
    database, the options, the budget, the pool settings and what may not be accepted."""

    executor: Executor
    llm: TracedLLM
    task: TaskContext
    options: CorrectionOptions
    trace: Trace
    budget: BudgetTracker
    pool: PoolSettings
    trust: TrustContext


MethodRunner = Callable[[MethodRun], SearchOutcome]


def _search(kind: type[TreeSearch]) -> MethodRunner:
    def run(r: MethodRun) -> SearchOutcome:
        return kind(
            executor=r.executor,
            llm=r.llm,
            task=r.task,
            options=r.options,
            trace=r.trace,
            budget=r.budget,
            trust=r.trust,
            pool=r.pool,
        ).run()

    return run


def _vote(r: MethodRun) -> SearchOutcome:
    needed = r.options.agreement_needed(r.pool.size)
    return run_vote(r.executor, r.llm, r.task, r.trace, r.pool, r.trust, needed)


def _unjudged(method: MethodRunner) -> MethodRunner:
    """A method without a judge: its acceptance stands only if `vouched` confirms it."""

    def run(r: MethodRun) -> SearchOutcome:
        return vouched(method(r), r.trust, r.trace)

    return run


METHODS: Mapping[Method, MethodRunner] = MappingProxyType(
    {
        Method.ACTS: _search(TreeSearch),
        Method.LINEAR: _search(LinearSearch),
        Method.VOTE: _vote,
        Method.CRITIC: _unjudged(
            lambda r: run_critic(r.executor, r.llm, r.task, r.options.json_retries, r.trace)
        ),
        Method.RAW: _unjudged(lambda r: run_raw(r.executor, r.llm, r.task, r.trace)),
        Method.DAC: _unjudged(
            lambda r: run_dac(r.executor, r.llm, r.task, r.trace, r.options.json_retries)
        ),
        Method.MAPLEREPAIR: _unjudged(
            lambda r: run_maplerepair(r.executor, r.llm, r.task, r.trace)
        ),
    }
)


def run_method(run: MethodRun) -> SearchOutcome:
    """The outcome of the options' method on the task."""
    return METHODS[run.options.method](run)
