"""Deterministic repair rules, one module per rule, in MapleRepair's staged order.

Each rule fixes one kind of error (its docstring says which) and is pure:
it reads a statement, the dialect, the schema's facts, the database's error
and answers to its own probe queries, and returns repaired statements or a
hint for an LLM repairer (`acts_sql.sql.rules.base`). `RULES` is the
registry, in the order a chain tries them; `acts_sql.tools.rule_chain`
executes probes and repairs, and the `maplerepair` method, candidate pools
and `split_fix_syntax` use it. Fixtures: `tests/fixtures/sql/rules/<name>.sql`.

| stage | rule | MapleRepair's repairer |
|---|---|---|
| syntax | missing_cte | (acts-sql's own: a candidate that dropped the user's WITH) |
| syntax | arithmetic_functions | Arith_Ops |
| syntax | dialect_functions | Date_Function_Hallucination (per dialect) |
| syntax | catalog_views | (acts-sql's own: information_schema on SQLite) |
| syntax | untyped_literals | (acts-sql's own: PostgreSQL's "is not unique" on bare strings) |
| syntax | unknown_identifier | No_Such_Column (spelling) |
| syntax | wrong_qualifier | No_Such_Column (alias not used, table-column mismatch) |
| syntax | ambiguous_join_key | (acts-sql's own: an ambiguous column the inner join equates) |
| syntax | ambiguous_column | (acts-sql's own: "ambiguous column name" in a join) |
| syntax | missing_join | No_Such_Column (missing join) |
| syntax | group_by_columns | (acts-sql's own) |
| syntax | quoted_value, foreign_quotes | (acts-sql's own) |
| syntax | keyword_typo | (acts-sql's own: SELEC, FORM, WERE, GROPU BY, ...) |
| syntax | reserved_name | (acts-sql's own: a table or column named like a keyword, bare) |
| syntax | missing_comma | (acts-sql's own: `SELECT plate COUNT(*)`) |
| syntax | stray_semicolon | (acts-sql's own: `;` inside a statement) |
| syntax | missing_semicolon | (acts-sql's own: statements on their own lines, run together) |
| syntax | repeated_with | (acts-sql's own: a WITH for each CTE) |
| syntax | reparse, transpile_dialect | (acts-sql's own, the earlier deterministic repairs) |
| syntax | execution_failure | Misc_Execution_Failure (hint) |
| logic | integer_division | Div_Cast |
| logic | null_ordering | Null_Value |
| logic | equals_null | (acts-sql's own) |
| logic | scalar_subquery_in | Equal (= instead of IN) |
| logic | column_alias | (acts-sql's own: `SELECT title pages`, a comma missing, runs) |
| logic | duplicate_rows | (acts-sql's own: a list whose rows repeat) |
| logic | bare_columns | (acts-sql's own: a GROUP BY SQLite ran without a selected column) |
| convention | date_format | Date_Time_Format |
| convention | unknown_value | Inconsistent_Condition |
| convention | join_condition | Inconsistent_Join |
| convention | foreign_key_join | (acts-sql's own: a join off the one key that links the tables) |
| convention | numeric_text_comparison | Comparison_Misuse |
| convention | in_subquery_columns | Inconsistent_IN (hint) |
| output | extreme_subquery | Subquery_MINMAX (hint) |
| output | concatenated_output | Output_Format_Hallucination (hint) |
| output | order_select | Order_Select (hint) |
"""

from __future__ import annotations

from acts_sql.sql.rules.base import (
    Probe,
    ProbeAnswer,
    Repair,
    Rule,
    RuleInput,
    RuleOutcome,
    Stage,
    probes_of,
    run_rule,
)
from acts_sql.sql.rules.convention.date_format import DateFormat
from acts_sql.sql.rules.convention.foreign_key_join import ForeignKeyJoin
from acts_sql.sql.rules.convention.in_subquery_columns import InSubqueryColumns
from acts_sql.sql.rules.convention.join_condition import JoinCondition
from acts_sql.sql.rules.convention.numeric_text_comparison import NumericTextComparison
from acts_sql.sql.rules.convention.unknown_value import UnknownValue
from acts_sql.sql.rules.logic.bare_columns import BareColumns
from acts_sql.sql.rules.logic.column_alias import ColumnAlias
from acts_sql.sql.rules.logic.duplicate_rows import DuplicateRows
from acts_sql.sql.rules.logic.equals_null import EqualsNull
from acts_sql.sql.rules.logic.integer_division import IntegerDivision
from acts_sql.sql.rules.logic.null_ordering import NullOrdering
from acts_sql.sql.rules.logic.scalar_subquery_in import ScalarSubqueryIn
from acts_sql.sql.rules.output.concatenated_output import ConcatenatedOutput
from acts_sql.sql.rules.output.extreme_subquery import ExtremeSubquery
from acts_sql.sql.rules.output.order_select import OrderSelect
from acts_sql.sql.rules.syntax.ambiguous_column import AmbiguousColumn
from acts_sql.sql.rules.syntax.ambiguous_join_key import AmbiguousJoinKey
from acts_sql.sql.rules.syntax.arithmetic_functions import ArithmeticFunctions
from acts_sql.sql.rules.syntax.catalog_views import CatalogViews
from acts_sql.sql.rules.syntax.dialect_functions import DialectFunctions
from acts_sql.sql.rules.syntax.execution_failure import ExecutionFailure
from acts_sql.sql.rules.syntax.foreign_quotes import ForeignQuotes
from acts_sql.sql.rules.syntax.group_by_columns import GroupByColumns
from acts_sql.sql.rules.syntax.keyword_typo import KeywordTypo
from acts_sql.sql.rules.syntax.missing_comma import MissingComma
from acts_sql.sql.rules.syntax.missing_cte import MissingCte
from acts_sql.sql.rules.syntax.missing_join import MissingJoin
from acts_sql.sql.rules.syntax.missing_semicolon import MissingSemicolon
from acts_sql.sql.rules.syntax.quoted_value import QuotedValue
from acts_sql.sql.rules.syntax.reparse import Reparse
from acts_sql.sql.rules.syntax.repeated_with import RepeatedWith
from acts_sql.sql.rules.syntax.reserved_name import ReservedName
from acts_sql.sql.rules.syntax.stray_semicolon import StraySemicolon
from acts_sql.sql.rules.syntax.transpile_dialect import TranspileDialect
from acts_sql.sql.rules.syntax.unknown_identifier import UnknownIdentifier
from acts_sql.sql.rules.syntax.untyped_literals import UntypedLiterals
from acts_sql.sql.rules.syntax.wrong_qualifier import WrongQualifier

RULES: tuple[Rule, ...] = (
    MissingCte(),
    ArithmeticFunctions(),
    DialectFunctions(),
    UntypedLiterals(),
    CatalogViews(),
    UnknownIdentifier(),
    WrongQualifier(),
    AmbiguousJoinKey(),
    AmbiguousColumn(),
    MissingJoin(),
    GroupByColumns(),
    QuotedValue(),
    ForeignQuotes(),
    KeywordTypo(),
    ReservedName(),
    MissingComma(),
    StraySemicolon(),
    RepeatedWith(),
    MissingSemicolon(),
    Reparse(),
    TranspileDialect(),
    ExecutionFailure(),
    IntegerDivision(),
    NullOrdering(),
    EqualsNull(),
    ScalarSubqueryIn(),
    ColumnAlias(),
    DuplicateRows(),
    BareColumns(),
    DateFormat(),
    UnknownValue(),
    JoinCondition(),
    ForeignKeyJoin(),
    NumericTextComparison(),
    InSubqueryColumns(),
    ExtremeSubquery(),
    ConcatenatedOutput(),
    OrderSelect(),
)
"""Every rule, in the order a chain tries them (stage by stage)."""
LEXICAL_RULES: frozenset[str] = frozenset(rule.name for rule in RULES if rule.lexical)
"""Names of the rules whose repairs change only how a statement is written (`Rule.lexical`)."""
CERTAIN_RULES: frozenset[str] = frozenset(rule.name for rule in RULES if rule.certain)
"""Names of the rules that repair a construct no question can mean as written (`Rule.certain`)."""


def rules_of(stage: Stage) -> list[Rule]:
    """The rules of one stage, in order."""
    return [rule for rule in RULES if rule.stage == stage]


def rule_named(name: str) -> Rule:
    """The rule called `name` (KeyError when none is)."""
    for rule in RULES:
        if rule.name == name:
            return rule
    raise KeyError(name)


__all__ = [
    "CERTAIN_RULES",
    "LEXICAL_RULES",
    "RULES",
    "Probe",
    "ProbeAnswer",
    "Repair",
    "Rule",
    "RuleInput",
    "RuleOutcome",
    "Stage",
    "probes_of",
    "rule_named",
    "rules_of",
    "run_rule",
]
