"""What the MCP tools do, without the protocol: correct SQL, explain a kept run, list the
schema. Each call opens the database the way `acts-sql fix` does (read-only guard; writes
only on a throw-away copy with ``allow_writes``) and closes it again, so a database that
cannot be opened is an error of that call, and the server goes on answering."""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from acts_sql.api import correct
from acts_sql.db.connect import open_database
from acts_sql.db.executor import Executor
from acts_sql.db.language import database_dialect
from acts_sql.engine.choice import ChoiceAsker
from acts_sql.engine.options import CorrectionOptions
from acts_sql.engine.result import CorrectionResult
from acts_sql.errors import ConfigError
from acts_sql.llm.base import LLMBackend
from acts_sql.mcp_server.choices import WaitingRun
from acts_sql.mcp_server.models import ExplainOutput, FixSqlOutput, TableSchema, TablesOutput
from acts_sql.mcp_server.runs import DEFAULT_KEEP_RUNS, RunStore, UnknownRunError

DEFAULT_PREVIEW_ROWS = 10

Render = Callable[[CorrectionResult], str]
"""A run as text (the CLI passes the rendering `acts-sql fix` prints)."""


class McpSettings(BaseModel):
    """How the server's tools reach the database and run corrections (the flags of
    `acts-sql mcp`)."""

    model_config = ConfigDict(frozen=True)

    db: str = Field(description="database URL or file path, opened for each tool call")
    dialect: str | None = None
    timeout: float | None = Field(None, gt=0, description="seconds per statement")
    max_rows: int | None = Field(None, ge=1, description="rows kept per statement")
    allow_writes: bool = Field(False, description="writes run on a throw-away copy")
    options: CorrectionOptions = Field(default_factory=CorrectionOptions)
    keep_runs: int = Field(DEFAULT_KEEP_RUNS, ge=1, description="runs kept for explain_run")
    preview_rows: int = Field(DEFAULT_PREVIEW_ROWS, ge=0, description="rows in a preview")
    ask: bool = Field(
        False, description="fix_sql returns readings to choose from; choose_reading continues"
    )

    @classmethod
    def of(cls, **values: Any) -> McpSettings:
        """Settings from flat values; ConfigError (saying which) when one is not valid."""
        try:
            return cls(**values)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ConfigError(f"invalid option {where}: {first['msg']}") from None


class ActsSqlTools:
    """The three tools over one database and one LLM backend. Corrections run one at a
    time (a backend, a local model above all, serves one run at a time); the runs are kept
    in this object only."""

    def __init__(self, settings: McpSettings, backend: LLMBackend, render: Render) -> None:
        self.settings = settings
        self.backend = backend
        self.render = render
        self.runs = RunStore(settings.keep_runs)
        self._one_run = threading.Lock()
        self._waiting: dict[str, WaitingRun] = {}

    def fix_sql(self, question: str, sql: str | None = None) -> FixSqlOutput:
        """Correct `sql` so it does what `question` asks; without `sql`, write it first
        (text-to-SQL). With `ask`, a run whose readings lead to different results returns
        them instead (`needs_choice`), and `choose_reading` continues it. Raises
        ActsSqlError for bad input, a database that cannot be opened or an LLM that cannot
        be used."""
        if self.settings.ask:
            return self._fix_asking(question, sql)
        with self._one_run:
            result = self._correct(question, sql, None)
        run_id = self.runs.add(result)
        return FixSqlOutput.of(run_id, result, self.settings.preview_rows)

    def choose_reading(self, run_id: str, reading: str) -> FixSqlOutput:
        """Continue a run that asked, with the reading the user chose; what fix_sql returns.
        UnknownRunError when no run with that id waits; ConfigError for a reading it did not
        offer (the run keeps waiting)."""
        run = self._waiting.get(run_id.strip())
        if run is None:
            raise UnknownRunError(
                f"no run {run_id!r} waits for a choice on this server: use a run_id that "
                "fix_sql returned with needs_choice",
                run_id=run_id,
            )
        offered = run.slot.offered()
        if offered and reading not in offered:
            raise ConfigError(f"reading {reading!r} was not offered: choose one of {offered}")
        result = run.answer(reading)
        del self._waiting[run_id.strip()]
        self.runs.add(result, run_id.strip())
        return FixSqlOutput.of(run_id.strip(), result, self.settings.preview_rows)

    def _fix_asking(self, question: str, sql: str | None) -> FixSqlOutput:
        if not self._one_run.acquire(blocking=False):
            raise ConfigError(
                "a fix_sql run waits for choose_reading "
                f"(run {', '.join(self._waiting) or 'in progress'}): choose first"
            )
        run = WaitingRun(lambda asker: self._correct(question, sql, asker), self._one_run.release)
        asked = run.wait()
        if asked is None:
            result = run.result()
            return FixSqlOutput.of(self.runs.add(result), result, self.settings.preview_rows)
        run_id = secrets.token_hex(6)
        self._waiting[run_id] = run
        s = self.settings
        return FixSqlOutput.waiting(
            run_id, asked, sql or "", s.options.method.value, s.dialect or ""
        )

    def _correct(
        self, question: str, sql: str | None, asker: ChoiceAsker | None
    ) -> CorrectionResult:
        executor = self.open()
        try:
            return correct(
                executor,
                question,
                sql,
                llm=self.backend,
                options=self.settings.options,
                dialect=self.settings.dialect,
                asker=asker,
            )
        finally:
            executor.close()

    def explain_run(self, run_id: str) -> ExplainOutput:
        """The kept run as text; UnknownRunError for an id this server does not keep."""
        result = self.runs.get(run_id)
        return ExplainOutput(run_id=run_id, accepted=result.accepted, text=self.render(result))

    def list_tables(self) -> TablesOutput:
        """The database's tables with their columns and types."""
        executor = self.open()
        try:
            tables = executor.reflect(sample_rows=0)
            dialect = database_dialect(executor)
        finally:
            executor.close()
        return TablesOutput(dialect=dialect, tables=[TableSchema.of(t) for t in tables])

    def open(self) -> Executor:
        """The database, opened as `acts-sql fix` opens it."""
        s = self.settings
        return open_database(
            s.db, s.dialect, timeout=s.timeout, max_rows=s.max_rows, allow_writes=s.allow_writes
        )
