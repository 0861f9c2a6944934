"""What a repair rule is: the error it fixes, what it reads, what it returns.

A rule is pure (no I/O). It reads one statement with what the caller knows
about it (`RuleInput`: the dialect, the schema's facts, the database's error
when it fails, its row count when it runs, and the answers to the rule's own
probes) and returns a `RuleOutcome`: repaired statements, best first, and/or
a hint for an LLM repairer when it found the error but has no safe fix.

Rules that need to look at data name read-only `Probe` queries (built here,
run by the caller, answered in `RuleInput.answers`); `probes` may be asked
again once answers arrive, for a second round (a distinct-values query after
an existence check came back empty). The caller (`acts_sql.tools.rule_chain`)
executes probes and repairs; here nothing is executed.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from enum import StrEnum
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from acts_sql.sql._rewrite import BAD_SQL_ERRORS, differs
from acts_sql.sql.dialects import Dialect, get_dialect
from acts_sql.sql.query_text import normalize_sql
from acts_sql.sql.schema_facts import SchemaFacts


class Stage(StrEnum):
    """MapleRepair's stages, in the order a chain runs them."""

    SYNTAX = "syntax"
    """The statement fails to execute: make it run."""
    LOGIC = "logic"
    """It runs, but computes something else than it evidently means (integer division, = NULL)."""
    CONVENTION = "convention"
    """It runs, but disagrees with how the data is written (date formats, values, join keys)."""
    OUTPUT = "output"
    """It runs, but its output may not be shaped as asked (hints for the LLM repairer only)."""


class Probe(BaseModel):
    """A read-only query a rule wants answered before it decides."""

    model_config = ConfigDict(frozen=True)

    key: str
    sql: str
    max_rows: int = 200


class ProbeAnswer(BaseModel):
    ok: bool
    rows: list[list[Any]] = Field(default_factory=list)
    error: str | None = None


class RuleInput(BaseModel):
    """One statement as a rule sees it."""

    model_config = ConfigDict(frozen=True)

    sql: str
    dialect: str
    facts: SchemaFacts = Field(default_factory=SchemaFacts)
    error: str | None = None
    """The database's error text when the statement fails; None when it runs."""
    row_count: int | None = None
    """Rows the statement returned, when it runs."""
    rows: list[list[Any]] | None = None
    """The rows themselves as the caller fetched them (perhaps fewer than `row_count`), when
    it runs; None when the caller does not say."""
    answers: dict[str, ProbeAnswer] = Field(default_factory=dict)
    reference_sql: str | None = None
    """The user's SQL when `sql` is a candidate correction of it (None: `sql` is the user's):
    the names its WITH clause defines are ones a candidate may have dropped."""

    @property
    def d(self) -> Dialect:
        return get_dialect(self.dialect)

    def answer(self, key: str) -> ProbeAnswer | None:
        return self.answers.get(key)


class Repair(BaseModel):
    sql: str
    detail: str = ""
    tag: str = ""
    """Which variant of the rule wrote it, when it has several (a source dialect)."""


class RuleOutcome(BaseModel):
    repairs: list[Repair] = Field(default_factory=list)
    """Repaired statements, best first (the chain keeps the first that executes)."""
    hint: str | None = None
    """What an LLM repairer should look at, when the rule found an error it cannot fix safely."""


class Rule(ABC):
    """One repair rule. Subclasses set `name` and `stage`; the docstring's first line
    says which error the rule fixes."""

    name: ClassVar[str]
    stage: ClassVar[Stage]
    on_error: ClassVar[bool] = False
    """Also tried in the syntax stage on a failing statement (its error is one it fixes)."""
    composes: ClassVar[bool] = True
    """False for a guess rather than a repair (rows that may repeat on purpose): the chain
    never applies it on its way, and `RuleChain.guesses` offers its repair of the statement
    as given, for a caller to weigh as a candidate of its own."""
    lexical: ClassVar[bool] = False
    """True when its repair restores only how the statement is written (a keyword's or a
    name's spelling, quotes, a comma, a semicolon, another dialect's function in this one's
    words), never what it asks: the engine may accept such a repair of SQL that fails with no
    model call (`acts_sql.engine.evidence_rule.LEXICAL_RULE`)."""
    certain: ClassVar[bool] = False
    """True when the construct it repairs can do nothing a question asks for as written (a
    comparison with NULL by `=` holds for no row) and its repair is the one reading left:
    the engine may accept such a repair with no model call when the user's SQL fails or the
    issue says its rows are wrong (`acts_sql.engine.evidence_rule.CERTAIN_RULE`)."""

    @classmethod
    def fixes(cls) -> str:
        return (cls.__doc__ or "").strip().splitlines()[0]

    def probes(self, given: RuleInput) -> list[Probe]:
        """Probes still unanswered that this rule needs for `given` (none by default)."""
        return []

    @abstractmethod
    def check(self, given: RuleInput) -> RuleOutcome | None:
        """The outcome for `given`; None when the rule does not apply. May raise on odd SQL."""


def run_rule(rule: Rule, given: RuleInput) -> RuleOutcome | None:
    """`rule.check(given)` that never raises, without repairs that change nothing."""
    try:
        outcome = rule.check(given)
    except BAD_SQL_ERRORS:
        return None
    if outcome is None:
        return None
    d = given.d
    seen = {normalize_sql(given.sql, d)}
    kept: list[Repair] = []
    for repair in outcome.repairs:
        if not differs(repair.sql, given.sql, d):
            continue
        key = normalize_sql(repair.sql, d)
        if key not in seen:
            seen.add(key)
            kept.append(repair)
    if not kept and not outcome.hint:
        return None
    return RuleOutcome(repairs=kept, hint=outcome.hint)


def probes_of(rule: Rule, given: RuleInput) -> list[Probe]:
    """`rule.probes(given)` that never raises, without probes already answered."""
    try:
        wanted = rule.probes(given)
    except BAD_SQL_ERRORS:
        return []
    unique = {p.key: p for p in wanted if p.key not in given.answers}
    return list(unique.values())
