"""SQL written where a query language was asked for, kept in that language.

Small models answer in SQL whatever the prompt asks (the 0.5B wrote SQL for all
60 PRQL questions of `bench logs`). Where the task's language rewrites SQL
(`QueryLanguage.from_sql`; PRQL does), the engine keeps the rewrite instead
of a candidate that cannot compile, once the rewrite has returned the SQL's
own rows on the database (`acts_sql.db.language.translate_sql`). The trace
records both texts (event ``sql_translated``), and the two statements run to
check the rewrite are recorded like any other (purpose ``translate``).

Used where the engine takes a model's answer as a query outside a pool: the
first query of text-to-query mode, the `raw` and `critic` rewrites, `vote`'s
samples, DAC's two rewrites, MapleRepair's LLM repairer and the raw candidate of
acts' first pool.
Pools do the same per candidate (`acts_sql.tools.pool`, origin ``<origin>:from_sql``).
"""

from __future__ import annotations

from acts_sql.db.executor import Executor
from acts_sql.db.language import translate_sql
from acts_sql.engine.budget import BudgetTracker
from acts_sql.engine.events import SqlTranslatedData
from acts_sql.engine.recording import TracedExecutor
from acts_sql.engine.trace import Trace


def in_task_language(
    sql: str,
    executor: Executor,
    trace: Trace,
    node: str | None,
    budget: BudgetTracker | None,
) -> str:
    """`sql` itself, or its rewrite in the language `executor` runs (see the module doc)."""
    if not sql.strip():
        return sql
    inner = executor.inner if isinstance(executor, TracedExecutor) else executor  # one record
    checked = TracedExecutor(inner, trace, node, "translate", budget=budget)
    translated = translate_sql(checked, sql)
    if translated is None:
        return sql
    trace.emit(
        SqlTranslatedData(sql=translated.query, written=translated.sql),
        node=node,
        summary=f"written in SQL; kept as its {translated.language} rewrite, which returns the "
        f"same {translated.rows} row(s)",
    )
    return translated.query
