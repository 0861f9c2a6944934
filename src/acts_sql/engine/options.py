"""How a correction runs: method, budgets and the paper's ablation switches."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from acts_sql.engine.budget import Budget
from acts_sql.errors import ConfigError

DEFAULT_TEMPERATURE = 0.8
DEFAULT_POOL = 4


class Method(StrEnum):
    ACTS = "acts"
    """The tree: branching at ambiguities, judging, rollback."""
    LINEAR = "linear"
    """Same tools, one path: no branching, no rollback (the paper's "w/ linear plan")."""
    CRITIC = "critic"
    """One LLM call: critique the SQL, then rewrite it."""
    RAW = "raw"
    """Single-turn correction with the BIRD-CRITIC baseline prompt."""
    VOTE = "vote"
    """The raw prompt K times (greedy + samples), majority vote over the results that run."""
    DAC = "dac"
    """DAC: entity linking and skeleton parsing by the LLM, their disagreements with the SQL
    as feedback for one correction, then DAC's execution-error prompt if it fails."""
    MAPLEREPAIR = "maplerepair"
    """MapleRepair: the staged rule chain; the LLM repairer only when the rules leave an error."""

    @classmethod
    def parse(cls, value: str) -> Method:
        """The method named `value` (any case); ConfigError naming the methods if none is."""
        try:
            return cls(str(value).lower())
        except ValueError:
            names = ", ".join(m.value for m in cls)
            raise ConfigError(f"unknown method {value!r}; choose one of: {names}") from None


class CorrectionOptions(BaseModel):
    """How one correction runs: the only carrier of the method, budgets and switches, from
    `acts_sql.correct(options=...)`, the command line, the service and the harnesses."""

    model_config = ConfigDict(extra="forbid")

    method: Method = Method.ACTS
    budget: Budget = Field(default_factory=lambda: Budget())
    execution_tools: bool = True
    """False: the paper's "w/o execution tools" ablation."""
    ambiguity_detection: bool = True
    """False: the paper's "w/o ambiguity detection" ablation."""
    json_retries: int = Field(2, ge=0, le=5)
    """Re-asks after an invalid JSON reply, per decision."""
    linear_retries: int = Field(2, ge=0, le=10)
    """Linear method: new attempts after a rejection, continuing the same path."""
    regenerations_per_node: int = Field(2, ge=0, le=10)
    """Tree: fresh generate_sql children the engine may add under one node after rejections."""
    schema_chars: int = Field(6000, ge=500)
    """Budget of the schema text in prompts."""
    candidates: int | None = Field(None, ge=1, le=16)
    """Candidates per SQL-writing node (greedy + samples); None: the backend's default."""
    temperature: float = Field(DEFAULT_TEMPERATURE, ge=0.0, le=2.0)
    """Sampling temperature of the samples in a pool (the first candidate is greedy)."""
    min_agreement: int | None = Field(None, ge=1, le=16)
    """Votes a result group needs before the judge's "accept" (or `vote`'s majority) stands
    (independent generations that return the same rows); None: 2 with pools, 1 with one
    candidate."""
    rule_candidates: bool = True
    """Pools also hold deterministic repairs of failing candidates (sqlglot re-read,
    transpiled from another dialect, unknown names replaced by the schema's nearest)."""
    raw_candidate: bool = True
    """acts/linear: the raw single-turn rewrite is one of the first candidates."""
    evidence_gate: bool = True
    """acts/linear: before the plan, accept a result that independent candidates (the raw
    rewrite, the rule chain's repair, up to two raw samples) agree on and that the result
    checks let stand (`acts_sql.engine.evidence`); False: the search always runs."""
    lexical_repairs: bool = True
    """acts/linear, with the evidence gate: when the user's SQL fails and lexical rules alone
    repair it (a keyword's or a name's spelling, quotes, a comma; `Rule.lexical`), or it fails
    or its rows are said to be wrong and a certain rule repairs it (`x = NULL`, true for no
    row; `Rule.certain`), accept the repair before any model call when the result checks let
    it stand (`acts_sql.engine.evidence_rule.LEXICAL_RULE`, `CERTAIN_RULE`); False: a model's
    candidate must agree."""
    scaled_budget: bool = True
    """acts/linear: when the evidence gate accepts nothing, its candidates scale the calls
    the search may still make (one line of evidence and nothing against it: stop; otherwise
    one plan round, grown by readings to explore and, for its judgement, by new agreement;
    `acts_sql.engine.scaled_budget`), never past the budget's limits. False: the search may
    spend up to the limits."""
    schema_constraint: bool = True
    """Requests that write SQL carry the schema's table and column names; a local model
    then writes only identifiers that can become one of them or an alias the statement
    defines (`acts_sql.llm.local.constraint`). False: nothing is constrained."""
    expect_same_rows: bool | None = None
    """True: the issue is about speed and the same rows are expected (a candidate that
    returns the user's rows may be accepted). None: decide from the issue's words."""
    replan: bool = True
    """acts: when every branch is exhausted with budget left, re-plan once from the root."""
    parallel: int | None = Field(None, ge=1, le=32)
    """LLM requests in flight at once: calls the search will make later are sent ahead
    while it waits (`acts_sql.engine.prefetch`); the decisions and their order do not
    change. None: 4 for an OpenAI-compatible endpoint, 1 for a local or scripted model."""

    @classmethod
    def of(cls, **values: Any) -> CorrectionOptions:
        """Options from flat values, the budget's limits among them; None leaves a default.
        ConfigError (saying which option) when a value is not valid."""
        given = {name: value for name, value in values.items() if value is not None}
        if "method" in given:
            given["method"] = Method.parse(given["method"])
        limits = {name: given.pop(name) for name in Budget.model_fields if name in given}
        try:
            return cls(budget=Budget(**limits), **given)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ConfigError(f"invalid option {where}: {first['msg']}") from None

    def agreement_needed(self, pool_size: int) -> int:
        """`min_agreement`, or its default for pools of `pool_size` candidates."""
        return self.min_agreement or (2 if pool_size > 1 else 1)


def default_candidates(llm_name: str) -> int:
    """Candidates per node when the user does not say: by backend, from measurements.

    Scripted backends default to one (a script then reads one reply per call,
    as written); models default to DEFAULT_POOL (docs/BENCHMARKS.md).
    """
    return 1 if "scripted" in llm_name else DEFAULT_POOL
