"""Command-line options shared by `fix`, `batch` and `bench`: switches, budgets, limits.

The defaults are those of `acts_sql.engine.budget.Budget`; the budgets apply
per correction (per task when benchmarking).
"""

from __future__ import annotations

from typing import Annotated

import typer

NoExecutionTools = Annotated[
    bool, typer.Option("--no-execution-tools", help="ablation: without execution tools")
]
NoAmbiguity = Annotated[
    bool, typer.Option("--no-ambiguity", help="ablation: without ambiguity detection")
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
