"""Command-line options shared by `fix`, `batch` and `bench`: switches, budgets, limits.

The defaults are those of `acts_sql.engine.budget.Budget`; the budgets apply
per correction (per task when benchmarking). A command's flags become one
`CorrectionOptions` with `correction_options(ctx.params)`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer

from acts_sql.cli.console import fail
from acts_sql.engine.budget import Budget
from acts_sql.engine.options import CorrectionOptions, Method
from acts_sql.errors import ConfigError

SWITCHES = {
    "no_execution_tools": "execution_tools",
    "no_ambiguity": "ambiguity_detection",
    "no_evidence_gate": "evidence_gate",
    "no_scaled_budget": "scaled_budget",
    "no_schema_constraint": "schema_constraint",
}
"""The ablation flags, and the option each one turns off; the other flags are named as the
`CorrectionOptions` field or `Budget` limit they set."""


def correction_options(params: Mapping[str, Any]) -> CorrectionOptions:
    """The options a command's flags ask for (`ctx.params`, by parameter name); a flag left
    at None keeps the default. ConfigError when a value is not valid."""
    names = (*CorrectionOptions.model_fields, *Budget.model_fields)
    values = {name: params[name] for name in names if name in params}
    values |= {option: not params[flag] for flag, option in SWITCHES.items() if flag in params}
    return CorrectionOptions.of(**values)


def llm_overrides(flags: Mapping[str, Any]) -> dict[str, Any]:
    """The backend options of `--base-url`, `--api-key` and `--llm-timeout` that were
    given, named as `acts_sql.llm.spec.parse_llm_spec` takes them."""
    named = {"base_url": "base_url", "api_key": "api_key", "llm_timeout": "timeout"}
    return {option: flags[flag] for flag, option in named.items() if flags.get(flag)}


def method_flag(value: str | Method) -> Method:
    """`--method`, any case; an unknown name: one `error:` line and exit 2."""
    try:
        return Method.parse(value)
    except ConfigError as exc:
        raise fail(str(exc)) from None


Llm = Annotated[str | None, typer.Option(help="LLM SPEC: openai:MODEL, local:NAME, scripted:PATH")]
BaseUrl = Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint URL")]
ApiKey = Annotated[str | None, typer.Option(help="API key for the endpoint")]
LlmTimeout = Annotated[
    float | None,
    typer.Option(
        "--llm-timeout",
        min=0.001,
        help="seconds one call to the endpoint may take (default: $ACTS_SQL_LLM_TIMEOUT, "
        "else 300 for a loopback endpoint and 60 for any other)",
    ),
]
LlmCache = Annotated[
    Path | None,
    typer.Option(
        help="record/replay cache directory: identical LLM requests are answered from disk"
    ),
]

NoExecutionTools = Annotated[
    bool, typer.Option("--no-execution-tools", help="ablation: without execution tools")
]
NoAmbiguity = Annotated[
    bool, typer.Option("--no-ambiguity", help="ablation: without ambiguity detection")
]
NoEvidenceGate = Annotated[
    bool,
    typer.Option(
        "--no-evidence-gate",
        help="acts/linear: always run the search, even when the first independent "
        "candidates agree (the evidence gate accepts them without a plan)",
    ),
]
NoScaledBudget = Annotated[
    bool,
    typer.Option(
        "--no-scaled-budget",
        help="acts/linear: let the search spend up to the budget's limits (by default, what "
        "the evidence gate leaves undecided gets the calls its candidates say it can use)",
    ),
]
NoSchemaConstraint = Annotated[
    bool,
    typer.Option(
        "--no-schema-constraint",
        help="a local model writes SQL freely (by default its identifiers are held to the "
        "schema's names and the aliases its SQL defines)",
    ),
]
MaxLlmCalls = Annotated[int, typer.Option(help="budget per correction: LLM calls")]
MaxNodes = Annotated[int, typer.Option(help="budget per correction: nodes executed")]
MaxDepth = Annotated[int, typer.Option(help="budget per correction: tree depth")]
MaxSeconds = Annotated[float, typer.Option(help="budget per correction: wall time in seconds")]
Candidates = Annotated[
    int | None,
    typer.Option(
        help="candidates per SQL-writing node: the greedy answer plus samples "
        "(default: the backend's, 4 for models, 1 for scripted)"
    ),
]
Temperature = Annotated[
    float, typer.Option(help="sampling temperature of the samples in a candidate pool")
]
Parallel = Annotated[
    int | None,
    typer.Option(
        min=1,
        max=32,
        help="LLM requests in flight at once: calls the search will make are sent ahead while "
        "it waits, its decisions stay in order (default: 4 for openai:, 1 for local/scripted)",
    ),
]
Timeout = Annotated[
    float | None,
    typer.Option(help="seconds per statement (default 60; 15 for WITH RECURSIVE)"),
]
MaxRows = Annotated[int | None, typer.Option(help="rows kept per statement (default 10,000)")]
AllowWrites = Annotated[
    bool,
    typer.Option(
        "--allow-writes",
        help="let statements write, on a throw-away copy of the database (never the original)",
    ),
]
