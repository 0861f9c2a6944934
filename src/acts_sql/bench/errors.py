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


class DriverMissingError(EvaluatorSetupError):
    """A Python package the run needs (a database driver) is not installed; the message
    names it and the extra that installs it."""


def import_driver(module: str, purpose: str, extra: str) -> object:
    """`module` imported, or DriverMissingError saying what needs it and how to install it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise DriverMissingError(
            f"{purpose} needs the Python package {module}: pip install 'acts-sql[{extra}]'"
        ) from None


class DatabaseSetupError(BenchError):
    """A fresh per-task database could not be created or dropped."""
