"""The rule chain: the deterministic repair rules run against a real database.

The rules themselves are pure (`acts_sql.sql.rules`); this is where their
probe queries and their repairs are executed. `RuleChain.run` follows
MapleRepair's order:

1. syntax stage, while the statement fails: every syntax rule (and every
   rule marked `on_error`) is asked for repairs of the current statement
   with the database's error; the first repair that executes ends the stage.
   A repair that fails with another error than before is kept as progress
   and the rules are asked again (at most `max_rounds` rounds), so that a
   misspelt column and a foreign function in one statement are both fixed.
   If the statement still fails, the last rule (`execution_failure`) hands
   its error to the caller as a hint;
2. logic, convention and output stages, once the statement runs: each rule
   in turn gets its probes answered (at most `PROBE_ROUNDS` rounds), then
   its first repair that executes is kept; hints are collected. A rule that
   guesses rather than repairs (`Rule.composes` False) is left out: `guesses`
   gives its repair of a statement as given, apart, for a caller to weigh.

Every decision is a `Firing` (rule, stage, what it tried, what became of it),
reported to `on_fire` as it happens and returned in `ChainResult.fired`.
`alternatives` gives each syntax rule's repairs of a failing statement
unexecuted, for a candidate pool to execute and judge side by side.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Literal

from pydantic import BaseModel, Field

from acts_sql.db.executor import Executor, TableInfo
from acts_sql.db.result import ExecResult
from acts_sql.sql.query_text import normalize_sql
from acts_sql.sql.rules import (
    RULES,
    ProbeAnswer,
    Repair,
    Rule,
    RuleInput,
    RuleOutcome,
    Stage,
    probes_of,
    rules_of,
    run_rule,
)
from acts_sql.sql.schema_facts import ColumnFact, SchemaFacts, from_tables

PROBE_ROUNDS = 2
PROBE_TIMEOUT_S = 10.0
MAX_ROUNDS = 3
REPAIRS_PER_RULE = 3
LATER_STAGES = (Stage.LOGIC, Stage.CONVENTION, Stage.OUTPUT)


class Firing(BaseModel):
    """One rule's say about one statement."""

    rule: str
    stage: str
    status: Literal["repaired", "progress", "failed", "hint"]
    """repaired: its repair executes and was kept; progress: its repair fails otherwise
    and was kept for the next round; failed: its repair does not execute; hint: it only
    found the error (see `hint`)."""
    sql: str | None = None
    detail: str = ""
    hint: str | None = None
    error: str | None = None


class ChainResult(BaseModel):
    sql: str
    result: ExecResult
    fired: list[Firing] = Field(default_factory=list)

    @property
    def repaired_by(self) -> list[str]:
        """Rules whose repairs the final statement carries, in order."""
        return [f.rule for f in self.fired if f.status in ("repaired", "progress")]

    @property
    def hints(self) -> list[tuple[str, str]]:
        """(rule, hint) of the rules that found an error they left to an LLM."""
        return [(f.rule, f.hint) for f in self.fired if f.hint]

    def changed(self, original: str, dialect: str) -> bool:
        return normalize_sql(self.sql, dialect) != normalize_sql(original, dialect)


class RuleChain:
    """The rules over one database (see the module doc)."""

    def __init__(
        self,
        executor: Executor,
        facts: SchemaFacts,
        dialect: str,
        *,
        on_fire: Callable[[Firing], None] | None = None,
        max_rounds: int = MAX_ROUNDS,
        reference_sql: str | None = None,
    ) -> None:
        """`reference_sql`: the user's SQL, when the statements repaired are candidate
        corrections of it (rules such as `missing_cte` read it)."""
        self.executor = executor
        self.facts = facts
        self.dialect = dialect
        self.on_fire = on_fire
        self.max_rounds = max_rounds
        self.reference_sql = reference_sql

    def run(
        self, sql: str, result: ExecResult, stages: Iterable[Stage] = tuple(Stage)
    ) -> ChainResult:
        """The statement after every stage in `stages` (later stages only once it runs)."""
        wanted = set(stages)
        state = ChainResult(sql=sql, result=result)
        if Stage.SYNTAX in wanted and not result.ok:
            state = self.syntax(state)
        if not state.result.ok:
            return state
        for stage in LATER_STAGES:
            if stage in wanted:
                state = self.later(stage, state)
        return state

    def syntax(self, state: ChainResult) -> ChainResult:
        """Repairs of a failing statement until one executes (see the module doc)."""
        tried: set[str] = {normalize_sql(state.sql, self.dialect)}
        for _ in range(self.max_rounds):
            progress = self._syntax_round(state, tried)
            if progress is None:
                break
            state = progress
            if state.result.ok:
                return state
        final = run_rule(_EXECUTION_FAILURE, self._input(state))
        if final is not None and final.hint:
            self._fire(state, _EXECUTION_FAILURE, "hint", hint=final.hint)
        return state

    def _syntax_round(self, state: ChainResult, tried: set[str]) -> ChainResult | None:
        """One pass of the syntax rules: the first repair that runs, else the first that
        fails differently (progress), else None."""
        progress: ChainResult | None = None
        for rule in _syntax_rules():
            outcome = run_rule(rule, self._input(state))
            for repair in (outcome.repairs if outcome else [])[:REPAIRS_PER_RULE]:
                key = normalize_sql(repair.sql, self.dialect)
                if key in tried:
                    continue
                tried.add(key)
                result = self.executor.execute(repair.sql)
                if result.ok:
                    return self._fire(state, rule, "repaired", repair.sql, result, repair.detail)
                if progress is None and result.error != state.result.error:
                    progress = self._fire(
                        state, rule, "progress", repair.sql, result, repair.detail
                    )
                else:
                    self._fire(state, rule, "failed", repair.sql, result, repair.detail)
        return progress

    def later(self, stage: Stage, state: ChainResult) -> ChainResult:
        """One pass of a stage's rules over a statement that runs (guesses left out)."""
        for rule in rules_of(stage):
            if not rule.composes:
                continue
            outcome = run_rule(rule, self._answered(rule, self._input(state)))
            if outcome is None:
                continue
            for repair in outcome.repairs[:REPAIRS_PER_RULE]:
                result = self.executor.execute(repair.sql)
                if result.ok:
                    state = self._fire(state, rule, "repaired", repair.sql, result, repair.detail)
                    break
                self._fire(state, rule, "failed", repair.sql, result, repair.detail)
            if outcome.hint:
                self._fire(state, rule, "hint", hint=outcome.hint)
        return state

    def guesses(self, sql: str, result: ExecResult) -> list[ChainResult]:
        """The repairs of the rules that do not compose (`Rule.composes`) of a statement that
        runs, as given, each on its own: the first of each rule's that executes."""
        if not result.ok:
            return []
        found: list[ChainResult] = []
        for rule in RULES:
            if rule.composes:
                continue
            start = ChainResult(sql=sql, result=result)
            outcome = run_rule(rule, self._answered(rule, self._input(start)))
            for repair in outcome.repairs[:REPAIRS_PER_RULE] if outcome else []:
                ran = self.executor.execute(repair.sql)
                status = "repaired" if ran.ok else "failed"
                kept = self._fire(start, rule, status, repair.sql, ran, repair.detail)
                if ran.ok:
                    found.append(kept)
                    break
        return found

    def alternatives(self, sql: str, result: ExecResult) -> list[tuple[str, str]]:
        """(`rule:<name>`, repaired SQL) of every syntax rule for a failing statement,
        not executed (a pool executes them); empty when the statement runs."""
        if result.ok:
            return []
        given = self._input(ChainResult(sql=sql, result=result))
        found: list[tuple[str, str]] = []
        for rule in _syntax_rules():
            outcome = run_rule(rule, given)
            found += [(_origin(rule, r), r.sql) for r in (outcome.repairs if outcome else [])]
        return found

    def _input(self, state: ChainResult) -> RuleInput:
        result = state.result
        return RuleInput(
            sql=state.sql,
            dialect=self.dialect,
            facts=self.facts,
            error=None if result.ok else (result.error or result.status),
            row_count=result.row_count if result.ok else None,
            rows=result.rows if result.ok and result.columns else None,
            reference_sql=self.reference_sql,
        )

    def _answered(self, rule: Rule, given: RuleInput) -> RuleInput:
        """`given` with the rule's probes executed, round after round."""
        answers = dict(given.answers)
        for _ in range(PROBE_ROUNDS):
            wanted = probes_of(rule, given.model_copy(update={"answers": answers}))
            if not wanted:
                break
            for probe in wanted:
                ran = self.executor.execute(
                    probe.sql, max_rows=probe.max_rows, timeout=PROBE_TIMEOUT_S
                )
                answers[probe.key] = ProbeAnswer(ok=ran.ok, rows=ran.rows, error=ran.error)
        return given.model_copy(update={"answers": answers})

    def _fire(
        self,
        state: ChainResult,
        rule: Rule,
        status: str,
        sql: str | None = None,
        result: ExecResult | None = None,
        detail: str = "",
        hint: str | None = None,
    ) -> ChainResult:
        """Record a firing (in `state.fired`, shared by the states of one run); for a kept
        repair, the new state."""
        firing = Firing.model_validate(
            {
                "rule": rule.name,
                "stage": rule.stage.value,
                "status": status,
                "sql": sql,
                "detail": detail,
                "hint": hint,
                "error": result.error if result is not None and not result.ok else None,
            }
        )
        if self.on_fire is not None:
            self.on_fire(firing)
        state.fired.append(firing)
        if status in ("repaired", "progress") and sql is not None and result is not None:
            return ChainResult(sql=sql, result=result, fired=state.fired)
        return state


def _origin(rule: Rule, repair: Repair) -> str:
    return f"rule:{rule.name}:{repair.tag}" if repair.tag else f"rule:{rule.name}"


def _syntax_rules() -> list[Rule]:
    """The syntax stage without its closing hint, then the later rules marked `on_error`."""
    own = [r for r in rules_of(Stage.SYNTAX) if r is not _EXECUTION_FAILURE]
    return own + [r for r in RULES if r.on_error and r.stage != Stage.SYNTAX]


_EXECUTION_FAILURE = next(r for r in RULES if r.name == "execution_failure")


def schema_facts(tables: list[TableInfo], dialect: str) -> SchemaFacts:
    """What the rules know of a reflected schema: typed columns and the DDL's foreign keys."""
    return from_tables(
        (
            (
                t.name,
                [ColumnFact(name=c.name, type=c.type, nullable=c.nullable) for c in t.columns],
                t.ddl,
            )
            for t in tables
        ),
        dialect,
    )


def hint_text(hints: list[tuple[str, str]]) -> str:
    """The hints of a chain as one block for a prompt, one paragraph per rule."""
    return "\n\n".join(f"[{rule}] {hint}" for rule, hint in hints)


__all__ = ["ChainResult", "Firing", "RuleChain", "RuleOutcome", "hint_text", "schema_facts"]
