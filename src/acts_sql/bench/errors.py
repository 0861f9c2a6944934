"""Typed errors of the benchmark harness.

They are configuration and input errors (bad task files, unknown sets, a
database server that cannot be reached): the CLI turns them into a one-line
reason and exit code 2. A task that fails to score is data (a result with a
status and a reason), never an exception.
"""

from __future__ import annotations

from acts_sql.errors import ActsSqlError, ConfigError


class BenchError(ActsSqlError):
    """Root of the harness's errors."""


class BenchDataError(BenchError, ConfigError):
    """A task, solution or prediction file that cannot be read or joined."""


class EvaluatorSetupError(BenchError, ConfigError):
    """The evaluator cannot be set up: a server URL that does not work, a bad option."""


class DatabaseSetupError(BenchError):
    """A fresh per-task database could not be created or dropped."""
