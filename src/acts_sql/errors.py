"""Typed errors. One root, subclasses carry machine-readable details.

Failures of the LLM or of a statement *inside* a correction are data (node
failures, execution results), not exceptions: a run never crashes on LLM
output. These exceptions are for bad input and configuration, which the CLI
turns into a one-line reason and exit code 2.
"""

from __future__ import annotations

from typing import Any


class ActsSqlError(Exception):
    """Root of every error acts-sql raises on purpose."""

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def __str__(self) -> str:
        return self.message


class ConfigError(ActsSqlError):
    """Bad input or configuration: unknown dialect, method, flag values."""


class InputTooLargeError(ConfigError):
    """A question or SQL longer than the documented limit (`acts_sql.engine.inputs`);
    details: ``what``, ``chars``, ``limit``."""


class DatabaseOpenError(ActsSqlError):
    """A database URL or file that cannot be opened as a database."""


class LLMError(ActsSqlError):
    """An LLM backend could not answer (endpoint down, bad key, ...)."""


class LLMUnavailableError(LLMError):
    """The LLM backend cannot be used at all, as opposed to a model that answered badly.

    Raised for an endpoint that cannot be reached (connection refused, unknown
    host, TLS failure) or that refuses every request (HTTP 401, 403, 404: bad
    key, no permission, wrong model or URL), and for a local model that cannot
    be installed, assembled or loaded.

    When it is raised before any LLM call of a run was answered, the engine sets
    ``details["before_any_reply"]`` and the run does not go on:
    :func:`acts_sql.correct` raises it (the CLI exits 2, the service answers
    ``503 llm_unavailable``). Raised after a reply, the run ends like any other
    LLM failure: its best candidate so far, ``accepted: false``.
    """

    @property
    def before_any_reply(self) -> bool:
        return bool(self.details.get("before_any_reply"))


class LLMSpecError(ConfigError):
    """An LLM SPEC that cannot be understood, or a malformed scripted file."""


class ScriptExhaustedError(LLMError):
    """The scripted backend has no response left for a purpose."""


class SqlParseError(ActsSqlError):
    """SQL that sqlglot cannot parse; details hold line, column, dialect."""


class LLMDeadlineError(LLMError):
    """An LLM call stopped because its deadline (``LLMRequest.timeout_s``) passed.

    The engine sets that deadline to what is left of the run's wall time, so
    this means the run's time is up. Details: ``purpose``, ``seconds`` (the
    call's time limit) and ``elapsed``.
    """

    @property
    def purpose(self) -> str:
        return str(self.details.get("purpose", ""))

    @property
    def seconds(self) -> float:
        return float(self.details.get("seconds", 0.0))


class QueryCompileError(ActsSqlError):
    """A query that a query language's compiler rejects (see `acts_sql.sql.languages`).

    Details: ``language`` (its name) and ``diagnostics`` (a list of
    `acts_sql.sql.diagnostics.SqlDiagnostic`: message, 1-based line and column).
    """

    @property
    def diagnostics(self) -> list[Any]:
        return list(self.details.get("diagnostics", []))
