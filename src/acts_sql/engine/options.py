"""How a correction runs: method, budgets and the paper's ablation switches."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field

from acts_sql.engine.budget import Budget


class Method(StrEnum):
    ACTS = "acts"
    """The tree: branching at ambiguities, judging, rollback."""
    LINEAR = "linear"
    """Same tools, one path: no branching, no rollback (the paper's "w/ linear plan")."""
    CRITIC = "critic"
    """One LLM call: critique the SQL, then rewrite it."""
    RAW = "raw"
    """Single-turn correction with the BIRD-CRITIC baseline prompt."""


class CorrectionOptions(BaseModel):
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
