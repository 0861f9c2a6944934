"""One correction from start to finish: schema, original SQL, method, result."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from acts_sql.agent.single_call import text_to_sql
from acts_sql.db.executor import Executor
from acts_sql.db.schema import render_schema
from acts_sql.engine.budget import BudgetExhaustedError, BudgetTracker
from acts_sql.engine.choice import ChoiceAsker
from acts_sql.engine.events import (
    BudgetExhaustedData,
    EventKind,
    InitialSqlData,
    LlmFailedData,
    RunFinishedData,
    RunStartedData,
)
from acts_sql.engine.fingerprint import result_shape
from acts_sql.engine.methods import MethodRun, run_method
from acts_sql.engine.options import CorrectionOptions, default_candidates
from acts_sql.engine.prefetch import Prefetcher, default_parallel
from acts_sql.engine.recording import TracedExecutor, TracedLLM, UsageLedger
from acts_sql.engine.result import CorrectionResult, UsageSummary
from acts_sql.engine.search import SearchOutcome
from acts_sql.engine.trace import Listener, Trace
from acts_sql.engine.translation import in_task_language
from acts_sql.engine.trust import TrustContext, expects_same_rows
from acts_sql.errors import LLMError, LLMUnavailableError
from acts_sql.llm.base import LLMBackend, SqlNames
from acts_sql.prompts.context import TaskContext, language_brief
from acts_sql.sql.query_text import split_statements
from acts_sql.sql.schema_facts import SchemaFacts
from acts_sql.tools.base import PoolSettings
from acts_sql.tools.registry import tool_list
from acts_sql.tools.rule_chain import schema_facts

NO_ISSUE = "(no issue text given: make the SQL run and do what it evidently intends)"
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


def focus_terms(*texts: str) -> list[str]:
    """Words of the issue and SQL, to put the tables they mention first."""
    return list(dict.fromkeys(w.lower() for t in texts for w in _WORD.findall(t or "")))


def run_correction(
    *,
    executor: Executor,
    llm: LLMBackend,
    question: str,
    sql: str | None,
    options: CorrectionOptions,
    listeners: list[Listener] | None = None,
    asker: ChoiceAsker | None = None,
) -> CorrectionResult:
    ahead = Prefetcher(llm, options.parallel or default_parallel(llm.name))
    try:
        return _run(executor, llm, question, sql, options, listeners, ahead, asker)
    finally:
        ahead.close()


def _run(
    executor: Executor,
    llm: LLMBackend,
    question: str,
    sql: str | None,
    options: CorrectionOptions,
    listeners: list[Listener] | None,
    ahead: Prefetcher,
    asker: ChoiceAsker | None = None,
) -> CorrectionResult:
    started = time.perf_counter()
    trace = Trace(listeners)
    budget = BudgetTracker(options.budget)
    ledger = UsageLedger()
    trace.emit(
        RunStartedData(
            method=options.method.value,
            dialect=executor.dialect,
            question=question,
            sql=sql,
            options=options.model_dump(mode="json"),
        ),
        summary=f"{options.method.value} on {executor.dialect}",
    )
    task = _task(executor, question, sql, options)
    names = constraint_names(task, options)
    traced_llm = TracedLLM(llm, trace, budget, ledger, ahead=ahead, sql_names=names)
    pool = _pool(options, llm, task)
    generated = not (sql or "").strip()
    try:
        if generated:
            sql = _initial_sql(traced_llm, task, options, trace, executor, budget)
        run_sql = TracedExecutor(executor, trace, None, "original", budget=budget).execute
        original = run_sql(sql) if sql else None
        task = task.model_copy(update={"original_sql": sql or "", "original_result": original})
        trust = trust_context(task, options, generated=generated)
        if not sql:
            outcome = SearchOutcome(stop_reason="no initial SQL could be generated")
        else:
            run = MethodRun(executor, traced_llm, task, options, trace, budget, pool, trust, asker)
            outcome = run_method(run)
    except BudgetExhaustedError as exc:
        outcome = SearchOutcome(stop_reason=str(exc))
        trace.emit(BudgetExhaustedData(which=exc.which), summary=str(exc))
    except LLMError as exc:
        if isinstance(exc, LLMUnavailableError) and exc.before_any_reply:
            raise  # no LLM reply at all: a configuration error, not a result
        outcome = SearchOutcome(stop_reason=f"LLM backend failed: {exc}")
        trace.emit(LlmFailedData(), summary=outcome.stop_reason)
    return _finish(
        _RunRecord(question=question, sql=sql or "", generated=generated, started=started),
        task,
        options,
        outcome,
        trace,
        ledger,
        ahead,
    )


def _task(
    executor: Executor, question: str, sql: str | None, options: CorrectionOptions
) -> TaskContext:
    """What every method reads: the issue, the user's SQL and the schema as prompt text."""
    dialect = executor.dialect
    tables = executor.reflect(sample_rows=3)
    schema_text = render_schema(
        tables, max_chars=options.schema_chars, focus_terms=focus_terms(question, sql or "")
    )
    language = language_brief(executor)
    return TaskContext(
        dialect=dialect,
        question=question.strip() or NO_ISSUE,
        original_sql=sql or "",
        schema_text=schema_text,
        schema_names={t.name: [c.name for c in t.columns] for t in tables},
        # the repair rules work on SQL's tree: a query language (PRQL) gets no facts
        schema_facts=schema_facts(tables, dialect) if language is None else SchemaFacts(),
        execution_visible=options.execution_tools,
        language=language,
        tool_list=tool_list(),
    )


def constraint_names(task: TaskContext, options: CorrectionOptions) -> SqlNames | None:
    """The names SQL-writing requests carry (`CorrectionOptions.schema_constraint`): every
    table and column, and each part of a qualified table name; None when the option is
    off, the schema is unknown or the task's language is not SQL."""
    if not options.schema_constraint or task.language is not None or not task.schema_names:
        return None
    names: set[str] = set()
    for table, columns in task.schema_names.items():
        names.update([table, *table.split("."), *columns])
    return SqlNames(names=sorted(names))


def _pool(options: CorrectionOptions, llm: LLMBackend, task: TaskContext) -> PoolSettings:
    """Candidates per SQL-writing node, their temperature, and whether rules add repairs."""
    return PoolSettings(
        size=options.candidates or default_candidates(llm.name),
        temperature=options.temperature,
        # the deterministic repairs rewrite SQL with sqlglot: not a query language's text
        rules=options.rule_candidates and task.language is None,
    )


@dataclass(frozen=True)
class _RunRecord:
    """What the run was asked: the issue, the SQL it started from and when it started."""

    question: str
    sql: str
    generated: bool
    started: float


def _finish(
    asked: _RunRecord,
    task: TaskContext,
    options: CorrectionOptions,
    outcome: SearchOutcome,
    trace: Trace,
    ledger: UsageLedger,
    ahead: Prefetcher,
) -> CorrectionResult:
    """The run's answer: the accepted or best candidate, else the SQL it started from."""
    final = None if outcome.returns_original else (outcome.accepted or outcome.best)
    final_sql = final.sql if final else asked.sql
    final_result = final.result if final else task.original_result
    accepted = outcome.accepted is not None
    trace.emit(
        RunFinishedData(accepted=accepted, sql=final_sql),
        summary=outcome.stop_reason,
        node=final.node if final else None,
    )
    events = trace.events
    sent = ahead.close()
    return CorrectionResult(
        sql=final_sql,
        accepted=accepted,
        original_sql=asked.sql,
        method=options.method.value,
        dialect=task.dialect,
        question=asked.question,
        reason=outcome.stop_reason,
        generated_initial_sql=asked.generated,
        statements=_statements(final_sql, outcome, task.dialect, final is not None),
        result=final_result.preview() if final_result else None,
        usage=UsageSummary.from_calls(
            ledger.calls,
            seconds=time.perf_counter() - asked.started,
            statements=sum(1 for e in events if e.kind == EventKind.STATEMENT),
            sent_ahead=sent.used,
            unused_prefetches=sent.unused,
        ),
        tree=outcome.tree,
        candidates=[c.model_dump(mode="json") for c in outcome.candidates],
        groups=outcome.groups,
        trace=events,
    )


def trust_context(
    task: TaskContext, options: CorrectionOptions, *, generated: bool = False
) -> TrustContext:
    """The user's SQL and its rows, which no candidate may repeat (see engine/trust.py).

    `generated` (text-to-SQL mode): the initial SQL is the model's own first answer to a
    question, not SQL a user says is wrong, so neither it nor its rows are refused: a
    candidate that repeats it is judged like any other, and accepted only if the judge
    finds that it answers the question."""
    same_rows = options.expect_same_rows
    if same_rows is None:
        same_rows = expects_same_rows(task.question)
    original = task.original_result
    shape = (
        result_shape(task.original_sql, original, task.dialect) if original is not None else None
    )
    return TrustContext.build(
        task.dialect,
        "" if generated else task.original_sql,
        shape,
        same_rows or generated,
        original_runs=original is not None and original.ok,
        generated=generated,
    )


def _initial_sql(
    llm: TracedLLM,
    task: TaskContext,
    options: CorrectionOptions,
    trace: Trace,
    executor: Executor,
    budget: BudgetTracker,
) -> str:
    reply = text_to_sql(llm.for_node("initial"), task, options.json_retries)
    if reply.value is None:
        trace.emit(InitialSqlData(ok=False), summary=f"failed: {reply.error}")
        return ""
    sql = reply.value.sql.strip().rstrip(";")
    sql = in_task_language(sql, executor, trace, None, budget)
    trace.emit(InitialSqlData(ok=True, sql=sql), summary=sql)
    return sql


def _statements(
    final_sql: str, outcome: SearchOutcome, dialect: str, from_method: bool
) -> list[str]:
    """The final SQL as a list of statements: the method's own list, else split."""
    if from_method and outcome.statements is not None:
        return list(outcome.statements)
    return split_statements(final_sql, dialect) if final_sql else []
