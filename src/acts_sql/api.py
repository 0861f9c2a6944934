"""The Python entry point: `acts_sql.correct(...)`.

Same options and same result as `acts-sql fix --json`. Bad input raises a
subclass of `acts_sql.errors.ActsSqlError` (ConfigError, DatabaseOpenError,
LLMSpecError) before any work starts. An LLM backend that cannot be used at
all (`acts_sql.errors.LLMUnavailableError`: endpoint unreachable, HTTP
401/403/404, local model not loadable) raises too, from the run's first LLM
call, once the database is open and the user's SQL has run; if it goes away
after answering a call, the run ends there and its best candidate comes back
with ``accepted=False``. Everything else that goes wrong during the correction
is reported in the result, never raised.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from acts_sql.db.connect import open_database
from acts_sql.db.executor import Executor
from acts_sql.db.language import database_dialect, with_language
from acts_sql.engine.budget import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_LLM_CALLS,
    DEFAULT_MAX_NODES,
    DEFAULT_MAX_SECONDS,
    Budget,
)
from acts_sql.engine.events import TraceEvent
from acts_sql.engine.options import DEFAULT_TEMPERATURE, CorrectionOptions, Method
from acts_sql.engine.result import CorrectionResult
from acts_sql.engine.runner import run_correction
from acts_sql.errors import ConfigError
from acts_sql.llm.base import LLMBackend
from acts_sql.llm.spec import parse_llm_spec
from acts_sql.sql.dialects import get_dialect
from acts_sql.sql.languages import get_language


def correct(
    db: str | Executor,
    question: str | None = None,
    sql: str | None = None,
    *,
    dialect: str | None = None,
    language: str | None = None,
    llm: str | LLMBackend | None = None,
    method: str | Method = Method.ACTS,
    max_llm_calls: int = DEFAULT_MAX_LLM_CALLS,
    max_nodes: int = DEFAULT_MAX_NODES,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_seconds: float = DEFAULT_MAX_SECONDS,
    execution_tools: bool = True,
    ambiguity_detection: bool = True,
    json_retries: int = 2,
    candidates: int | None = None,
    temperature: float = DEFAULT_TEMPERATURE,
    expect_same_rows: bool | None = None,
    timeout: float | None = None,
    max_rows: int | None = None,
    allow_writes: bool = False,
    parallel: int | None = None,
    on_event: Callable[[TraceEvent], None] | None = None,
) -> CorrectionResult:
    """Correct `sql` so that it does what `question` (the user's issue) asks.

    `db` is a database URL (`sqlite:///path.db`), a file path, or an open
    Executor. Without `sql`, the initial SQL is generated from `question`
    (text-to-SQL mode) and then corrected. `llm` is an LLM SPEC string
    (`openai:MODEL`, `scripted:PATH`, `local:NAME`, ...) or a backend object.
    `candidates` is the pool size per SQL-writing node (greedy + samples at
    `temperature`; None: the backend's default, 1 for scripted backends).
    `expect_same_rows` says whether the issue is about speed, so that a
    candidate returning the user's rows may be accepted (None: from the
    issue's words). `timeout` (seconds per statement), `max_rows` and `allow_writes` (writes
    run on a throw-away copy, never the original) apply when `db` is a URL.
    `language` names the query language of `sql` and of the answer (a plugin such as
    "prql", see `acts-sql languages`; None: the database's SQL): its queries are compiled
    to the database's SQL to run, and the result's `sql` is in that language.
    `parallel`: LLM requests in flight at once (calls the search will make are sent
    ahead while it waits; its decisions and their order do not change); None: 4 for an
    OpenAI-compatible endpoint, 1 for a local or scripted model.
    """
    question = (question or "").strip()
    sql = (sql or "").strip() or None
    if not question and not sql:
        raise ConfigError("nothing to do: give a question (the issue), a SQL statement, or both")
    options = make_options(
        method=method,
        budget=dict(
            max_llm_calls=max_llm_calls,
            max_nodes=max_nodes,
            max_depth=max_depth,
            max_seconds=max_seconds,
        ),
        execution_tools=execution_tools,
        ambiguity_detection=ambiguity_detection,
        json_retries=json_retries,
        candidates=candidates,
        temperature=temperature,
        expect_same_rows=expect_same_rows,
        parallel=parallel,
    )
    wanted = get_dialect(dialect).name if dialect else None
    if language is not None:
        get_language(language)  # an unknown language is bad input before anything opens
    backend = llm if isinstance(llm, LLMBackend) else parse_llm_spec(llm)
    executor = (
        db
        if isinstance(db, Executor)
        else open_database(
            db, wanted, timeout=timeout, max_rows=max_rows, allow_writes=allow_writes
        )
    )
    try:
        actual = database_dialect(executor)
        if wanted and wanted != actual:
            raise ConfigError(f"--dialect {wanted} does not match the database, which is {actual}")
        return run_correction(
            executor=with_language(executor, language),
            llm=backend,
            question=question,
            sql=sql,
            options=options,
            listeners=[on_event] if on_event else None,
        )
    finally:
        if not isinstance(db, Executor):
            executor.close()


def make_options(method: str | Method, **values: Any) -> CorrectionOptions:
    """Options from flat keyword values (budget limits and switches); ConfigError if invalid."""
    try:
        chosen = Method(str(method).lower())
    except ValueError:
        names = ", ".join(m.value for m in Method)
        raise ConfigError(f"unknown method {method!r}; choose one of: {names}") from None
    budget_keys = set(Budget.model_fields)
    try:
        budget = Budget.model_validate({k: v for k, v in values.items() if k in budget_keys})
        switches = {k: v for k, v in values.items() if k not in budget_keys}
        return CorrectionOptions.model_validate({"method": chosen, "budget": budget, **switches})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"invalid option {where}: {first['msg']}") from None
