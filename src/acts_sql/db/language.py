"""Running queries of a query language (PRQL, ...) on a database an executor supports.

`LanguageExecutor` wraps the database's own executor: `execute` compiles the
text with the language (`acts_sql.sql.languages.QueryLanguage.compile`) to the
database's SQL and runs that SQL through the wrapped executor, so the
read-only guard, the engine's own read-only mode, timeouts, row caps and the
throw-away copy all apply to the compiled SQL exactly as to SQL written by
hand. A text that does not compile is never sent: it comes back as an
``error`` result of kind ``syntax`` whose message is the compiler's (line,
column, message) and whose ``error_position`` is the offset in the text.

`translate_sql` is the other way in: a model asked for the language wrote SQL;
where the language can rewrite that SQL (`QueryLanguage.from_sql`, PRQL can),
the rewrite is kept when it compiles and returns the SQL's own rows.

Its ``dialect`` is the language's name, which is what the engine compares
and normalises candidates by; ``database_executor()`` is the wrapped executor,
for the SQL acts-sql writes itself (the `inspect_columns` templates).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

from pydantic import BaseModel

from acts_sql.db.executor import Executor, ScratchSession, TableInfo
from acts_sql.db.result import ExecResult
from acts_sql.errors import ConfigError, QueryCompileError
from acts_sql.sql.dialects import get_dialect
from acts_sql.sql.languages import QueryLanguage, get_language, plugin_for
from acts_sql.sql.languages.base import Diagnostic
from acts_sql.sql.repairs import has_top_level_order_by

COMPILED_SQL_CHARS = 400
"""How much of the compiled SQL a database error quotes."""


def own_timeout(executor: Any) -> float | None:
    """The executor's per-statement timeout setting, where it has one (None: BIRD's).

    Not part of the protocol: the executors of `acts_sql.db` call it ``timeout``,
    a `LanguageExecutor` (and the wrappers that copy it) ``default_timeout``.
    """
    for attribute in ("default_timeout", "timeout"):
        value = getattr(executor, attribute, None)
        if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
            return float(value)
    return None


class LanguageExecutor:
    """An Executor for `language` queries over `database` (see the module doc)."""

    def __init__(self, database: Executor, language: QueryLanguage) -> None:
        target = get_dialect(database.dialect)
        if target.name not in language.targets:
            raise ConfigError(
                f"{language.display_name} does not run on {target.display_name} "
                f"databases; it runs on: {', '.join(language.targets)}",
                language=language.name,
                dialect=target.name,
            )
        self.database = database
        self.language = language
        self.dialect = language.name
        self.database_dialect = target.name

    @property
    def default_timeout(self) -> float | None:
        """The wrapped executor's per-statement timeout, where it has one."""
        return own_timeout(self.database)

    def compile(self, text: str) -> str:
        """`text` as the database's SQL; QueryCompileError when it does not compile."""
        return self.language.compile(text, self.database_dialect)

    def execute(
        self,
        sql: str,
        *,
        max_rows: int | None = None,
        timeout: float | None = None,
        isolate: bool = False,
    ) -> ExecResult:
        """Compile `sql` (a query of the language), then run it on the database."""
        try:
            compiled = self.compile(sql)
        except QueryCompileError as exc:
            return compile_failure(self.language, sql, exc)
        options: dict[str, Any] = {"max_rows": max_rows, "timeout": timeout}
        if isolate:
            options["isolate"] = True
        result = self.database.execute(compiled, **options)
        if result.ok or result.error is None:
            return result
        shown = " ".join(compiled.split())
        if len(shown) > COMPILED_SQL_CHARS:
            shown = shown[: COMPILED_SQL_CHARS - 3] + "..."
        return result.model_copy(
            update={
                "error": f"{result.error} (in the SQL compiled from the "
                f"{self.language.display_name}: {shown})",
                "error_position": None,  # a position in the compiled SQL, not in the query
            }
        )

    def database_executor(self) -> Executor:
        return self.database

    def scratch(self) -> AbstractContextManager[ScratchSession]:
        return self.database.scratch()

    def reflect(self, sample_rows: int = 3) -> list[TableInfo]:
        return self.database.reflect(sample_rows)

    def close(self) -> None:
        self.database.close()


def compile_failure(language: QueryLanguage, text: str, error: QueryCompileError) -> ExecResult:
    """The result of a query that does not compile: kind ``syntax``, the compiler's words."""
    diagnostics: list[Diagnostic] = error.diagnostics
    first = diagnostics[0] if diagnostics else None
    described = "; ".join(d.describe() for d in diagnostics) or error.message
    return ExecResult(
        status="error",
        error=f"{language.display_name} compile error: {described}",
        error_kind="syntax",
        error_code="compile",
        error_position=_offset(text, first) if first is not None else None,
    )


def _offset(text: str, diagnostic: Diagnostic) -> int | None:
    if diagnostic.line is None or diagnostic.column is None:
        return None
    lines = text.split("\n")
    if diagnostic.line > len(lines):
        return None
    return sum(len(line) + 1 for line in lines[: diagnostic.line - 1]) + diagnostic.column - 1


def with_language(executor: Executor, language: str | None) -> Executor:
    """`executor` for queries in `language`: itself for its own SQL dialect (or None), a
    `LanguageExecutor` for a plugin. ConfigError for an unknown language, another SQL
    dialect, or a database the language does not run on."""
    if language is None:
        return executor
    chosen = get_language(language)
    if executor.dialect == chosen.name:  # already runs it
        return executor
    if chosen.is_sql:
        own = get_dialect(executor.dialect)
        if chosen.name != own.name:
            raise ConfigError(
                f"--language {chosen.name}: the database runs {own.display_name} SQL; "
                "SQL dialects are not translated",
                language=chosen.name,
            )
        return executor
    return LanguageExecutor(executor, chosen)


def database_executor(executor: Executor) -> Executor:
    """The executor that runs the database's own SQL: `executor` itself, unless it runs a
    query language (then the executor it wraps)."""
    getter = getattr(executor, "database_executor", None)
    inner = getter() if callable(getter) else executor
    return inner if isinstance(inner, Executor) else executor


def database_dialect(executor: Executor) -> str:
    """The SQL dialect of the database behind `executor`."""
    return get_dialect(database_executor(executor).dialect).name


class SqlTranslation(BaseModel):
    """SQL a model wrote where a query of the language was asked for, and its rewrite."""

    sql: str
    """What the model wrote: SQL of the database."""
    query: str
    """The same query in the language; it compiles and returns the SQL's rows."""
    language: str
    rows: int


def translate_sql(executor: Executor, text: str) -> SqlTranslation | None:
    """`text` rewritten in the query language `executor` runs, when `text` is SQL of the
    database rather than a query of the language, the language can rewrite it
    (`QueryLanguage.from_sql`), and the rewrite checks out: both run, neither is cut at
    the row cap, and they return the same rows (in the same order when the SQL sorts).
    None otherwise, and always for an executor of plain SQL. `executor` may wrap a
    `LanguageExecutor` (the engine's recording one does): both statements run through it,
    read-only, as every statement the engine runs does."""
    language = plugin_for(executor.dialect)
    if language is None or not text.strip():
        return None
    target = database_dialect(executor)
    try:
        language.compile(text, target)
        return None  # a query of the language already
    except QueryCompileError:
        pass
    query = language.from_sql(text, target)
    if query is None:
        return None
    own = database_executor(executor).execute(text)
    if not own.ok or own.truncated:
        return None
    rewritten = executor.execute(query)
    ordered = has_top_level_order_by(text, target)
    if not rewritten.ok or rewritten.truncated or not _same_rows(own, rewritten, ordered):
        return None
    return SqlTranslation(sql=text, query=query, language=language.name, rows=len(own.rows))


def _same_rows(a: ExecResult, b: ExecResult, ordered: bool) -> bool:
    if len(a.rows) != len(b.rows) or len(a.columns) != len(b.columns):
        return False
    left, right = [repr(tuple(r)) for r in a.rows], [repr(tuple(r)) for r in b.rows]
    if ordered:
        return left == right
    return sorted(left) == sorted(right)
