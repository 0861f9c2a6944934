"""What a rule reports, and what it may look at."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from acts_sql.sql.dialects import Dialect
from acts_sql.sql.safety_rules.tables import REASON_PREFIX, Category, Kind


@dataclass(frozen=True)
class Finding:
    """One reason to block: a category, a label ("DELETE") and where it was
    found ("inside a CTE"; empty for the statement itself)."""

    category: Category
    label: str
    where: str = ""

    @classmethod
    def of(cls, kind: Kind, where: str = "", **names: str) -> Finding:
        """A finding for `kind`, its label formatted with `names` ({name})."""
        return cls(kind.category, kind.label.format(**names) if names else kind.label, where)

    def located(self, where: str) -> Finding:
        """This finding with `where` appended to its location."""
        joined = f"{self.where} {where}".strip() if self.where else where
        return replace(self, where=joined)

    def reason(self) -> str:
        """The sentence the agent sees after "blocked: "."""
        prefix = REASON_PREFIX[self.category]
        detail = f"{self.label} {self.where}".strip()
        return f"{prefix}: {detail}" if detail else prefix


@dataclass(frozen=True)
class Context:
    """What every rule may consult: the dialect, a way to check a nested
    statement text (EXPLAIN's) with the same rules, and the functions the
    executor found side-effect free in the user's own catalog."""

    dialect: Dialect
    check_text: Callable[[str], list[Finding]]
    catalog_functions: frozenset[str] | None = None
    """The connected server's side-effect-free function names (as its catalog spells
    them), used instead of the generated list when given (see `functions.is_listed`)."""
