"""acts-sql: corrects SQL with a plan-guided, tree-structured search (ACTS-SQL).

from acts_sql import correct
result = correct("sqlite:///shop.db", "List the electronics products",
                 "SELECT name FROM products WHERE category = 'Electronics'",
                 llm="openai:gpt-4o-mini")
print(result.sql, result.accepted)
"""

from acts_sql.api import correct
from acts_sql.engine.options import Method
from acts_sql.engine.result import CorrectionResult
from acts_sql.errors import ActsSqlError

__version__ = "0.1.0"
__all__ = ["ActsSqlError", "CorrectionResult", "Method", "__version__", "correct"]
