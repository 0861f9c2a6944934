"""What every method reads (`MethodRun`) and the two ways a method's runner is built: a
search over the plan tree (`run_search`) or a method without a judge (`unjudged`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps

from acts_sql.db.executor import Executor
from acts_sql.engine.budget import BudgetTracker
from acts_sql.engine.choice import ChoiceAsker
from acts_sql.engine.methods.vouch import vouched
from acts_sql.engine.options import CorrectionOptions
from acts_sql.engine.recording import TracedLLM
from acts_sql.engine.search import SearchOutcome, TreeSearch
from acts_sql.engine.trace import Trace
from acts_sql.engine.trust import TrustContext
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
    asker: ChoiceAsker | None = None
    """Asks the person between readings that lead to different results
    (`acts_sql.engine.choice`); None: the engine chooses."""


MethodRunner = Callable[[MethodRun], SearchOutcome]


def run_search(kind: type[TreeSearch], r: MethodRun) -> SearchOutcome:
    """The outcome of a search of `kind` (the tree search or a subclass) on the run."""
    return kind(
        executor=r.executor,
        llm=r.llm,
        task=r.task,
        options=r.options,
        trace=r.trace,
        budget=r.budget,
        trust=r.trust,
        pool=r.pool,
        asker=r.asker,
    ).run()


def unjudged(method: MethodRunner) -> MethodRunner:
    """A method without a judge: its acceptance stands only if `vouched` confirms it."""

    @wraps(method)
    def run(r: MethodRun) -> SearchOutcome:
        return vouched(method(r), r.trust, r.trace)

    return run
