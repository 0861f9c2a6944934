"""Pure SQL foundations on sqlglot: dialects, diagnostics, normalisation,
decomposition into units, and template queries. No I/O, no database, no LLM.
"""

from acts_sql.sql.decompose import MAIN, Unit, decompose, output_columns
from acts_sql.sql.diagnostics import (
    SqlDiagnostic,
    parse_statements,
    syntax_diagnostics,
)
from acts_sql.sql.dialects import Dialect, all_dialects, dialect_names, get_dialect
from acts_sql.sql.query_text import normalize_sql, split_statements
from acts_sql.sql.templates import column_profile_sql, column_values_sql, table_expression

__all__ = [
    "MAIN",
    "Dialect",
    "SqlDiagnostic",
    "Unit",
    "all_dialects",
    "column_profile_sql",
    "column_values_sql",
    "decompose",
    "dialect_names",
    "get_dialect",
    "normalize_sql",
    "output_columns",
    "parse_statements",
    "split_statements",
    "syntax_diagnostics",
    "table_expression",
]
