"""The plan protocol: the JSON the Central Agent writes, as pydantic models.

This is the one public contract between any LLM and the engine (see
docs/PROTOCOL.md, whose JSON Schema is exported from these models). Field
names are stable. Models ignore unknown keys, so a chatty LLM that adds a
field does not fail validation.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class ToolName(StrEnum):
    DETECT_AMBIGUITIES = "detect_ambiguities"
    INSPECT_COLUMNS = "inspect_columns"
    RUN_SQL = "run_sql"
    SPLIT_FIX_SYNTAX = "split_fix_syntax"
    GENERATE_SQL = "generate_sql"


class Purpose(StrEnum):
    """Why an LLM is called; every request carries one."""

    PLAN = "plan"
    CHOOSE = "choose"
    JUDGE = "judge"
    DETECT_AMBIGUITIES = "detect_ambiguities"
    DECOMPOSE = "decompose"
    FIX_SYNTAX = "fix_syntax"
    GENERATE_SQL = "generate_sql"
    CORRECT = "correct"
    LINK_ENTITIES = "link_entities"
    """`dac`: the question's tables, columns and values."""
    SKETCH = "sketch"
    """`dac`: a SQL written from the question alone, for its skeleton."""


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class PlanNode(_Lenient):
    """One tool call in the revision plan."""

    id: str = Field(min_length=1, max_length=64)
    description: str = ""
    tool: str = Field(description="one of the five tool names")
    input: dict[str, Any] = Field(default_factory=dict)
    children: list[str] = Field(default_factory=list)


class Plan(_Lenient):
    """The agent's revision plan: a tree of nodes and the node to run first."""

    cursor: str
    nodes: list[PlanNode] = Field(min_length=1)


def _require(*names: str) -> Callable[[dict[str, Any]], None]:
    """A json_schema_extra that marks fields required in the schema sent to the LLM.

    Validation stays lenient (the fields have defaults), but a model that writes
    JSON from the schema writes them, in declaration order: the reason first.
    """

    def extra(schema: dict[str, Any]) -> None:
        schema["required"] = list(names)

    return extra


class ChooseDecision(_Lenient):
    """Among several children, the one to follow next (the reason is written first)."""

    model_config = ConfigDict(extra="ignore", json_schema_extra=_require("reason", "cursor"))

    reason: str = ""
    cursor: str


class JudgeDecision(_Lenient):
    """The agent's verdict on the result groups of a node's candidates.

    The reason comes first and is part of the verdict: an "accept" whose
    reason says the candidate is wrong is not an acceptance. `group` names the
    accepted result group (A, B, ...); with one group it may be omitted.
    """

    model_config = ConfigDict(
        extra="ignore", json_schema_extra=_require("reason", "verdict", "group")
    )

    reason: str = ""
    verdict: Literal["accept", "reject"]
    group: str | None = None
    backtrack_to: str | None = None
    new_nodes: list[PlanNode] = Field(default_factory=list)


class Ambiguity(_Lenient):
    phrase: str
    interpretations: list[str] = Field(min_length=1)


class AmbiguityReport(_Lenient):
    """Output of `detect_ambiguities`: underspecified phrases of the issue."""

    ambiguities: list[Ambiguity] = Field(default_factory=list)


class DecomposedUnit(_Lenient):
    name: str = Field(min_length=1)
    sql: str
    depends_on: list[str] = Field(default_factory=list)


class Decomposition(_Lenient):
    """`split_fix_syntax`, decomposition step: flat single-SELECT units."""

    units: list[DecomposedUnit] = Field(min_length=1)


class RepairedSql(_Lenient):
    """`split_fix_syntax`, repair step."""

    sql: str = Field(min_length=1)


class GeneratedSql(_Lenient):
    """Output of `generate_sql`: a minimally edited candidate."""

    sql: str = Field(min_length=1)
    rationale: str = ""


PROTOCOL_MODELS: dict[str, type[BaseModel]] = {
    "Plan": Plan,
    "ChooseDecision": ChooseDecision,
    "JudgeDecision": JudgeDecision,
    "AmbiguityReport": AmbiguityReport,
    "Decomposition": Decomposition,
    "RepairedSql": RepairedSql,
    "GeneratedSql": GeneratedSql,
}
