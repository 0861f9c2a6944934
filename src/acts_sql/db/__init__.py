"""Database layer: executors (one per dialect), typed results, schema reflection."""

from acts_sql.db.connect import open_database
from acts_sql.db.executor import (
    DEFAULT_MAX_ROWS,
    DEFAULT_TIMEOUT_S,
    RECURSIVE_TIMEOUT_S,
    ColumnInfo,
    Executor,
    ScratchSession,
    TableInfo,
)
from acts_sql.db.result import ExecResult
from acts_sql.db.schema import render_schema
from acts_sql.db.sqlite import SQLiteExecutor, SQLiteScratchSession

__all__ = [
    "DEFAULT_MAX_ROWS",
    "DEFAULT_TIMEOUT_S",
    "RECURSIVE_TIMEOUT_S",
    "ColumnInfo",
    "ExecResult",
    "Executor",
    "SQLiteExecutor",
    "SQLiteScratchSession",
    "ScratchSession",
    "TableInfo",
    "open_database",
    "render_schema",
]
