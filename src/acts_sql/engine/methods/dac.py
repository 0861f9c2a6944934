"""The `dac` method: Decomposed Automation Correction (arXiv 2408.08779), in acts-sql's structure.

DAC decomposes text-to-SQL into two sub-tasks, solves them with the LLM and
feeds their disagreements with the SQL back as the correction feedback:

1. entity linking (purpose `link_entities`): the issue's words aligned with
   tables, columns and values; checked against the schema (`grounded`), with
   DAC's deterministic pass over column names added (`question_columns`), and
   each value checked against the database's values (a probe for the value;
   when none holds it, the value as the column spells it ignoring case; else
   the value is dropped);
2. skeleton parsing (purpose `sketch`): a SQL written from the question
   alone, whose skeleton (`acts_sql.sql.skeleton`) is the clause structure
   the question implies;
3. feedback: the tables, columns and values linked but not used by the SQL,
   and the sketch's skeleton when it differs and is not longer than the
   SQL's (DAC suggests only simpler structures); if there is any, one
   correction (purpose `correct`). DAC keeps a correction only if it runs and
   its skeleton is not longer than the SQL's, else the SQL stays as it was;
4. DAC's execution-error prompt (purpose `correct`) when the SQL still fails.

DAC's released code runs the entity and skeleton corrections as two separate
correction calls and retries them at a higher temperature; here both
disagreements go into one correction, as the issue this follows asks, and
there are no retries: at most four LLM calls.

A query language other than SQL (PRQL) is read through the SQL it compiles
to: the entities the query uses come from the compiled SQL, and the value
probes run on the database itself. The skeleton step is left out there (no
`sketch` call): the compiled SQL's clause structure is the compiler's, not
the writer's, so a skeleton comparison would say nothing about the query.
"""

from __future__ import annotations

from sqlglot import exp

from acts_sql.agent.dac import (
    correct_with_feedback,
    fix_execution_error,
    link_entities,
    sketch_sql,
)
from acts_sql.db.executor import Executor
from acts_sql.db.language import database_dialect, database_executor
from acts_sql.db.result import ExecResult
from acts_sql.engine.events import DacDroppedData, DacEntitiesData, DacFeedbackData, DacSkeletonData
from acts_sql.engine.methods.base import MethodRun, unjudged
from acts_sql.engine.methods.staged import StagedRun
from acts_sql.engine.recording import TracedExecutor, TracedLLM
from acts_sql.engine.search import SearchOutcome
from acts_sql.engine.trace import Trace
from acts_sql.engine.translation import in_task_language
from acts_sql.errors import ActsSqlError
from acts_sql.prompts.context import TaskContext
from acts_sql.sql.dialects import get_dialect
from acts_sql.sql.entities import (
    Disagreement,
    Mention,
    disagreements,
    grounded,
    question_columns,
    sql_entities,
)
from acts_sql.sql.rules import _probes
from acts_sql.sql.schema_facts import SchemaFacts
from acts_sql.sql.skeleton import skeleton, skeleton_length

NODE = "dac"


class _SqlView:
    """How DAC reads a query: SQL as it is; another language's query (PRQL) as the SQL it
    compiles to, in the database's dialect (None when it does not compile)."""

    def __init__(self, executor: Executor, task: TaskContext) -> None:
        self.is_sql = task.language is None
        self.dialect = task.dialect if self.is_sql else database_dialect(executor)
        self._compile = getattr(executor, "compile", None)

    def sql(self, text: str) -> str | None:
        if self.is_sql or not callable(self._compile):
            return text
        try:
            compiled = self._compile(text)
        except ActsSqlError:
            return None
        return compiled if isinstance(compiled, str) else None


@unjudged
def run(r: MethodRun) -> SearchOutcome:
    executor, llm, task, trace = r.executor, r.llm, r.task, r.trace
    original = task.original_result
    if original is None:
        return SearchOutcome(stop_reason="the user's SQL was not executed")
    view = _SqlView(executor, task)
    traced = TracedExecutor(executor, trace, NODE, "candidate", budget=llm.budget)
    probe = TracedExecutor(database_executor(executor), trace, NODE, "candidate", budget=llm.budget)
    staged = StagedRun(NODE, task.dialect, task.original_sql, trace)
    facts = task.facts()
    mentions = _linked(llm, task, r.options.json_retries, facts, probe, view.dialect, trace)
    sketch = sketch_sql(llm.for_node(NODE), task) if view.is_sql else None
    feedback = _feedback(task, facts, mentions, sketch, view, trace)
    current, result, origin = task.original_sql, original, "original"
    if feedback:
        fixed = _in_language(
            correct_with_feedback(llm.for_node(NODE), task, feedback), traced, trace, llm
        )
        tried = _try(fixed, traced, staged, "dac_feedback")
        if tried is not None and _kept(tried, fixed or "", current, view, trace):
            current, result, origin = fixed or current, tried, "dac_feedback"
    if not result.ok:
        fixed = fix_execution_error(llm.for_node(NODE), task, current, result.error or "")
        fixed = _in_language(fixed, traced, trace, llm)
        tried = _try(fixed, traced, staged, "dac_execution_error")
        if tried is not None and tried.ok:
            current, result, origin = fixed or current, tried, "dac_execution_error"
    why = "rewritten with the entity and skeleton feedback" if origin != "original" else ""
    if origin == "dac_execution_error":
        why = "rewritten after the execution error"
    return staged.finish(current, result, origin, why or "no disagreement found")


def _in_language(sql: str | None, run: TracedExecutor, trace: Trace, llm: TracedLLM) -> str | None:
    """A rewrite the model wrote in SQL for a query language, kept in that language where
    the language can rewrite it (`acts_sql.engine.translation`)."""
    return in_task_language(sql, run, trace, NODE, llm.budget) if sql else sql


def _try(sql: str | None, run: TracedExecutor, staged: StagedRun, origin: str) -> ExecResult | None:
    if not sql:
        return None
    result = run.execute(sql)
    staged.record(sql, result, origin)
    return result


def _kept(result: ExecResult, sql: str, before: str, view: _SqlView, trace: Trace) -> bool:
    """DAC's guard: a correction stays only if it runs and (SQL) its skeleton is not longer."""
    if not result.ok:
        trace.emit(DacDroppedData(), node=NODE, summary=f"the correction fails: {result.error}")
        return False
    if not view.is_sql:
        return True
    new, old = skeleton(sql, view.dialect), skeleton(before, view.dialect)
    if new and old and skeleton_length(new) > skeleton_length(old):
        why = f"the correction's skeleton is longer than the SQL's ({new!r} vs {old!r})"
        trace.emit(DacDroppedData(), node=NODE, summary=why)
        return False
    return True


def _linked(
    llm: TracedLLM,
    task: TaskContext,
    retries: int,
    facts: SchemaFacts,
    run: TracedExecutor,
    dialect: str,
    trace: Trace,
) -> list[Mention]:
    reply = link_entities(llm.for_node(NODE), task, retries)
    raw = [link.mention() for link in reply.value.links] if reply.value else []
    mentions = grounded(raw, facts)
    tables = list(dict.fromkeys(m.table for m in mentions if m.table))
    mentions = grounded(mentions + question_columns(task.question, facts, tables), facts)
    checked = [m for m in (_checked(m, facts, run, dialect) for m in mentions) if m]
    trace.emit(
        DacEntitiesData(
            linked=[m.model_dump() for m in raw],
            kept=[m.model_dump() for m in checked],
            error=reply.error,
        ),
        node=NODE,
        summary=f"{len(checked)} of {len(raw)} linked entities found in the database",
    )
    return checked


def _checked(m: Mention, facts: SchemaFacts, run: TracedExecutor, dialect: str) -> Mention | None:
    """A value mention as the database holds it (None when it holds no such value)."""
    if m.kind != "value" or not m.table or not m.column:
        return m
    d = get_dialect(dialect)
    column = facts.column(m.table, m.column)
    value = m.value or ""
    literal = _literal(value, column.is_numeric if column else False)
    condition = exp.EQ(this=exp.column(m.column, quoted=True), expression=literal)
    if run.execute(_probes.any_row(m.table, condition, d)).rows:
        return m
    if not literal.is_string:
        return None
    loose = run.execute(_probes.values_like(m.table, m.column, value, d))
    spelled = [row[0] for row in loose.rows if row and row[0] is not None]
    return m.model_copy(update={"value": str(spelled[0])}) if len(spelled) == 1 else None


def _literal(value: str, numeric: bool) -> exp.Literal:
    """`value` as a number literal for a numeric column when it is a (non-negative) number."""
    if numeric and value.replace(".", "", 1).isdigit():
        return exp.Literal(this=value, is_string=False)
    return exp.Literal.string(value)


def _feedback(
    task: TaskContext,
    facts: SchemaFacts,
    mentions: list[Mention],
    sketch: str | None,
    view: _SqlView,
    trace: Trace,
) -> str:
    """The disagreements of the entities and the sketch's skeleton with the SQL, as lines."""
    read = view.sql(task.original_sql)
    entities = sql_entities(read, view.dialect, facts) if read else None
    lines = _entity_lines(disagreements(mentions, entities) if entities else Disagreement())
    own = skeleton(task.original_sql, view.dialect) if view.is_sql else None
    implied = skeleton(sketch, view.dialect) if sketch else None
    if implied and own and implied != own and skeleton_length(own) >= skeleton_length(implied):
        lines.append(
            f'- the SQL skeleton could be like "{implied}", where each "_" stands for one '
            "table, column or value"
        )
    trace.emit(
        DacSkeletonData(sketch=sketch, skeleton=implied, sql_skeleton=own),
        node=NODE,
        summary=implied or "(no sketch)",
    )
    text = "\n".join(lines)
    trace.emit(DacFeedbackData(feedback=text), node=NODE, summary=text or "(no disagreement)")
    return text


def _entity_lines(found: Disagreement) -> list[str]:
    lines = []
    if found.tables:
        lines.append("- the issue mentions the tables " + ", ".join(f'"{t}"' for t in found.tables))
    if found.columns:
        lines.append(
            "- the issue mentions the columns " + ", ".join(f'"{c}"' for c in found.columns)
        )
    for m in found.values:
        lines.append(f"- the issue mentions the value '{m.value}', which is stored in {m.where}")
    return lines
