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

from acts_sql.db.connect import open_database
from acts_sql.db.executor import Executor
from acts_sql.db.language import database_dialect, with_language
from acts_sql.engine.choice import ChoiceAsker
from acts_sql.engine.events import TraceEvent
from acts_sql.engine.inputs import checked_inputs
from acts_sql.engine.options import CorrectionOptions
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
    llm: str | LLMBackend | None = None,
    options: CorrectionOptions | None = None,
    on_event: Callable[[TraceEvent], None] | None = None,
    dialect: str | None = None,
    language: str | None = None,
    asker: ChoiceAsker | None = None,
) -> CorrectionResult:
    """Correct `sql` so that it does what `question` (the user's issue) asks.

    `db` is a database URL (`sqlite:///path.db`), a file path, or an open
    Executor (`acts_sql.db.connect.open_database` takes a statement timeout, a
    row cap and `allow_writes`, which runs writes on a throw-away copy). Without
    `sql` (None), the initial SQL is generated from `question` (text-to-SQL
    mode) and then corrected; SQL that is given but empty or only whitespace is
    a ConfigError. The SQL may have at most 250,000 characters and the
    question 100,000 (`acts_sql.engine.inputs`; InputTooLargeError, a
    ConfigError, above). `llm` is an LLM SPEC string (`openai:MODEL`, `scripted:PATH`,
    `local:NAME`, ...) or a backend object. `options` (`CorrectionOptions`: the
    method, its `Budget` and switches, candidate pools, parallel requests) says
    how the correction runs; None: the defaults. `on_event` hears every trace
    event as it happens. `dialect`, when given, must be the database's.
    `language` names the query language of `sql` and of the answer (a plugin
    such as "prql", see `acts-sql languages`; None: the database's SQL): its
    queries are compiled to the database's SQL to run, and the result's `sql` is
    in that language. `asker` (`acts_sql.engine.choice.ChoiceAsker`) is asked to choose
    when readings of an ambiguous phrase lead to different results and nothing was accepted;
    None: the engine chooses.
    """
    question, sql = checked_inputs(question, sql)
    wanted = get_dialect(dialect).name if dialect else None
    if language is not None:
        get_language(language)  # an unknown language is bad input before anything opens
    backend = llm if isinstance(llm, LLMBackend) else parse_llm_spec(llm)
    executor = db if isinstance(db, Executor) else open_database(db, wanted)
    try:
        actual = database_dialect(executor)
        if wanted and wanted != actual:
            raise ConfigError(f"--dialect {wanted} does not match the database, which is {actual}")
        return run_correction(
            executor=with_language(executor, language),
            llm=backend,
            question=question,
            sql=sql,
            options=options or CorrectionOptions(),
            listeners=[on_event] if on_event else None,
            asker=asker,
        )
    finally:
        if not isinstance(db, Executor):
            executor.close()
