"""acts-sql: corrects SQL with a plan-guided, tree-structured search (ACTS-SQL).

from acts_sql import Budget, CorrectionOptions, correct
result = correct("sqlite:///shop.db", "List the electronics products",
                 "SELECT name FROM products WHERE category = 'Electronics'",
                 llm="openai:gpt-4o-mini",
                 options=CorrectionOptions(method="acts", budget=Budget(max_llm_calls=20)))
print(result.sql, result.accepted)
"""

from acts_sql.api import correct
from acts_sql.engine.budget import Budget
from acts_sql.engine.options import CorrectionOptions, Method
from acts_sql.engine.result import CorrectionResult
from acts_sql.errors import ActsSqlError

__version__ = "0.1.0"
__all__ = [
    "ActsSqlError",
    "Budget",
    "CorrectionOptions",
    "CorrectionResult",
    "Method",
    "__version__",
    "correct",
]
