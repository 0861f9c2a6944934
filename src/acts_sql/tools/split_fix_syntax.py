"""`split_fix_syntax`: repair a failing statement clause by clause.

Any execution error is repaired here, not only syntax errors: unknown tables
and columns (the prompt lists the schema's nearest names), type and runtime
errors, each with the database's own message. A statement that runs is left
alone (no LLM call): there is nothing to repair.

Input: `{"sql": "..."}` (default: the candidate of the parent node, else the
user's SQL). Steps:

0. The syntax stage of the rule chain first (`acts_sql.tools.rule_chain`,
   unless the pool's `rules` setting is off): a misspelt column, a function
   of another dialect, a missing join key... When a rule's repair executes,
   it is the node's candidate (origin `rule:<names>`) and no LLM is asked.

1. Decompose the statement into flat single-SELECT units with dependencies.
   For a syntax error, the LLM decomposes (purpose `decompose`, reply
   `{"units": [{"name", "sql", "depends_on"}]}`), since it keeps the user's
   text where the error is; sqlglot is the fallback. For other failures
   sqlglot decomposes (exact, no LLM call) and the LLM is the fallback.
2. Check every unit on its own, concurrently: in a private scratch session,
   each dependency becomes an EMPTY stand-in table with the dependency's
   output columns, so a unit's errors are its own and not inherited.
3. Give the per-unit diagnostics (database error, sqlglot line/column) to the
   LLM, which repairs the statement at clause level (purpose `fix_syntax`,
   reply `{"sql": "..."}`), with sqlglot's lenient reading of the statement
   as a hint. The repaired SQL is executed like any candidate.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from pydantic import BaseModel, Field

from acts_sql.db.result import ExecResult, failure_text
from acts_sql.errors import SqlParseError
from acts_sql.prompts.context import SQL_REPLY_MAX_TOKENS, sql_reply_cap
from acts_sql.protocol import Decomposition, Purpose, RepairedSql
from acts_sql.sql.decompose import Unit, decompose, output_columns
from acts_sql.sql.diagnostics import parse_statements, syntax_diagnostics
from acts_sql.sql.dialects import get_dialect
from acts_sql.sql.repairs import describe_unknown, unknown_identifiers
from acts_sql.tools.base import (
    PoolEntry,
    Tool,
    ToolArgs,
    ToolCall,
    ToolEnv,
    ToolOutcome,
    advertised,
)
from acts_sql.tools.generate_sql import PoolOutput, pool_outcome
from acts_sql.tools.llm_call import SqlAsker, ask_tool_llm
from acts_sql.tools.pool import collect_pool
from acts_sql.tools.rule_chain import ChainResult, Firing, RuleChain

MAX_PARALLEL_CHECKS = 4


class SplitFixSyntaxArgs(ToolArgs):
    sql: str = advertised("S", "")


class UnitCheck(BaseModel):
    """Diagnostics of one unit, checked against empty stand-ins of its dependencies."""

    name: str
    sql: str
    depends_on: list[str] = Field(default_factory=list)
    status: str
    error: str | None = None
    parse_errors: list[str] = Field(default_factory=list)

    def line(self) -> str:
        deps = f" (uses {', '.join(self.depends_on)})" if self.depends_on else ""
        verdict = "ok" if self.status == "ok" else failure_text(self.status, self.error)
        extra = "".join(f"\n    sqlglot: {p}" for p in self.parse_errors)
        return f"- {self.name}{deps}: {verdict}\n    {self.sql}{extra}"


class RepairOutput(PoolOutput):
    """The pool of repairs (none: `runs`, or only `units` when no repair came) and how it
    was made: by the rules, or by the LLM from the units."""

    runs: bool = False
    """The statement runs: nothing to repair (the engine skips the node)."""
    decomposed_by: str = ""
    units: list[UnitCheck] = Field(default_factory=list)
    repaired_by_rules: list[str] = Field(default_factory=list)
    rules: list[Firing] = Field(default_factory=list)


class SplitFixSyntaxTool(Tool[SplitFixSyntaxArgs]):
    name = "split_fix_syntax"
    description = (
        "splits a failing statement into single-SELECT units, checks each, repairs the syntax."
    )
    Args = SplitFixSyntaxArgs
    Output = RepairOutput
    uses_execution = True
    produces_candidate = True

    def run(self, env: ToolEnv, call: ToolCall, args: SplitFixSyntaxArgs) -> ToolOutcome:
        sql = args.sql or call.base_sql or env.task.original_sql
        failing = call.base_result if call.base_sql == sql and call.base_result else None
        failing = failing or env.executor.execute(sql)
        if failing.ok:
            return ToolOutcome(
                status="done",
                summary="the statement runs without error: nothing to repair",
                output=RepairOutput(sql=sql, runs=True),
            )
        if env.pool.rules:
            fixed = repaired_by_rules(env, sql, failing)
            if fixed is not None:
                return fixed
        units, source = self._units(env, sql, failing)
        checks = check_units(env, units)
        ask = SqlAsker(
            env,
            Purpose.FIX_SYNTAX,
            "fix_syntax.txt",
            RepairedSql,
            based_on=sql,
            statement=sql,
            error=failing.error or failing.status,
            names=nearest_names_hint(env, sql, failing),
            units="\n".join(c.line() for c in checks) or "(no units)",
            reading=sqlglot_reading(sql, env.task.dialect),
        )
        stops: list[str] = []
        entries = collect_pool(env, ask, env.pool, env.memory, stops=stops)
        if not entries:
            return ToolOutcome.failed(
                f"no usable repair: {ask.last_error}", RepairOutput(units=checks)
            )
        made = RepairOutput(decomposed_by=source, units=checks)
        outcome = pool_outcome(env, entries, stopped="; ".join(stops), output=made)
        bad = [c.name for c in checks if c.status != "ok"]
        outcome.summary = (
            f"{len(checks)} unit(s) by {source}; failing: {', '.join(bad) or 'none'}\n"
            + outcome.summary
        )
        return outcome

    def _units(self, env: ToolEnv, sql: str, failing: ExecResult) -> tuple[list[Unit], str]:
        """Units of `sql`: from the LLM first when the database saw a syntax error.

        sqlglot is lenient and re-renders what it parses, so its units can hide
        the very syntax error the database reported; the LLM's units keep the
        user's text. For other failures sqlglot's units are exact and cost no call.
        """
        ways = (
            (("llm", self._llm_units), ("sqlglot", _sqlglot_units))
            if failing.is_syntax_error
            else (("sqlglot", _sqlglot_units), ("llm", self._llm_units))
        )
        for source, way in ways:
            units = way(env, sql)
            if units:
                return units, source
        return [Unit(name="main", sql=sql, depends_on=[], output_columns=None)], "fallback"

    def _llm_units(self, env: ToolEnv, sql: str) -> list[Unit] | None:
        reply = ask_tool_llm(
            env,
            Purpose.DECOMPOSE,
            "decompose.txt",
            Decomposition,
            max_tokens=min(SQL_REPLY_MAX_TOKENS, 2 * sql_reply_cap(sql)),  # units: the SQL again
            statement=sql,
        )
        if reply.value is None:
            return None
        return [
            Unit(
                name=u.name,
                sql=u.sql,
                depends_on=u.depends_on,
                output_columns=_columns_or_none(u.sql, env.task.dialect),
            )
            for u in reply.value.units
        ]


def repaired_by_rules(env: ToolEnv, sql: str, failing: ExecResult) -> ToolOutcome | None:
    """The node's outcome when the rule chain's syntax stage makes `sql` run; None otherwise."""
    chain = RuleChain(
        env.executor, env.task.facts(), env.task.dialect, reference_sql=env.task.original_sql
    )
    state = chain.syntax(ChainResult(sql=sql, result=failing))
    if not state.result.ok or not state.changed(sql, env.task.dialect):
        return None
    rules = state.repaired_by
    entry = PoolEntry(sql=state.sql, origin="rule:" + "+".join(rules), result=state.result)
    outcome = pool_outcome(
        env, [entry], output=RepairOutput(repaired_by_rules=rules, rules=state.fired)
    )
    outcome.summary = f"repaired by rules ({', '.join(rules)}), no LLM call\n" + outcome.summary
    return outcome


def nearest_names_hint(env: ToolEnv, sql: str, failing: ExecResult) -> str:
    """Unknown tables and columns of `sql` with the schema's nearest names, for the prompt."""
    if not env.task.schema_names:
        return "(schema names unavailable)"
    try:
        unknown = unknown_identifiers(sql, env.task.dialect, env.task.schema_names)
    except Exception:  # a hint must never fail the repair
        unknown = []
    return describe_unknown(unknown) if unknown else "(every table and column exists)"


def _sqlglot_units(env: ToolEnv, sql: str) -> list[Unit] | None:
    try:
        return decompose(sql, env.task.dialect)
    except SqlParseError:
        return None


def sqlglot_reading(sql: str, dialect: str) -> str:
    """How lenient sqlglot reads a statement the database rejected, as a hint."""
    try:
        statements = parse_statements(sql, dialect)
    except SqlParseError:
        return "(sqlglot cannot parse it either)"
    d = get_dialect(dialect)
    return ";\n".join(s.sql(dialect=d.sqlglot_name) for s in statements)


def _columns_or_none(sql: str, dialect: str) -> list[str] | None:
    try:
        return output_columns(sql, dialect)
    except SqlParseError:
        return None


def check_units(env: ToolEnv, units: list[Unit]) -> list[UnitCheck]:
    """Check every unit against empty stand-ins of its dependencies, in parallel."""
    by_name = {u.name: u for u in units}
    workers = max(1, min(MAX_PARALLEL_CHECKS, len(units)))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="unit-check") as pool:
        return list(pool.map(lambda u: _check_unit(env, u, by_name), units))


def _check_unit(env: ToolEnv, unit: Unit, by_name: dict[str, Unit]) -> UnitCheck:
    parse_errors = [
        f"line {d.line}, column {d.column}: {d.message}"
        for d in syntax_diagnostics(unit.sql, env.task.dialect)
    ]

    def verdict(status: str, error: str | None) -> UnitCheck:
        return UnitCheck(
            name=unit.name,
            sql=unit.sql,
            depends_on=list(unit.depends_on),
            status=status,
            error=error,
            parse_errors=parse_errors,
        )

    with env.executor.scratch() as session:
        for dep in unit.depends_on:
            columns = by_name[dep].output_columns if dep in by_name else None
            if not columns:
                return verdict("unchecked", f"output columns of dependency {dep!r} are unknown")
            made = session.create_stand_in(dep, columns)
            if not made.ok:
                return verdict("unchecked", f"stand-in for {dep!r} failed: {made.error}")
        result = session.execute(unit.sql, max_rows=1)
    return verdict(result.status, result.error)
