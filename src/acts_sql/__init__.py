"""acts-sql: corrects SQL with a plan-guided, tree-structured search (ACTS-SQL)."""

__version__ = "0.1.0"
