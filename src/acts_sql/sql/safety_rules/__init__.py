"""The read-only guard's rules, as small functions over data tables.

- `tables`: what each statement class, command keyword, pragma and function does;
- `text`: rules over the raw text (what parsing would drop);
- `statements`: what a whole statement is (`judge_root`);
- `nodes`: rules applied to every node of its tree (`judge_nodes`, `NODE_RULES`).

`acts_sql.sql.safety.check_statement` runs them and turns findings into a verdict.
"""

from acts_sql.sql.safety_rules.findings import Context, Finding
from acts_sql.sql.safety_rules.nodes import NODE_RULES, judge_nodes
from acts_sql.sql.safety_rules.statements import judge_root, unparsed_findings
from acts_sql.sql.safety_rules.tables import REASON_PREFIX, Category, Kind
from acts_sql.sql.safety_rules.text import TEXT_RULES

__all__ = [
    "NODE_RULES",
    "REASON_PREFIX",
    "TEXT_RULES",
    "Category",
    "Context",
    "Finding",
    "Kind",
    "judge_nodes",
    "judge_root",
    "unparsed_findings",
]
