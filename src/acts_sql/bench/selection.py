"""Choosing tasks: by set, dialect, category, id, whether a solution exists, and a limit."""

from __future__ import annotations

from pydantic import BaseModel, Field

from acts_sql.bench.models import ScoredTask


class TaskFilter(BaseModel):
    """Which tasks to run. Empty lists mean "all"; names compare case-insensitively."""

    sets: list[str] = Field(default_factory=list)
    dialects: list[str] = Field(default_factory=list)
    categories: list[str] = Field(default_factory=list)
    ids: list[str] = Field(default_factory=list)
    """``PostgreSQL_5`` (any set) or ``pg530/PostgreSQL_5``."""
    with_solution_only: bool = False
    limit: int | None = Field(default=None, ge=0)

    def _ids_match(self, item: ScoredTask) -> bool:
        if not self.ids:
            return True
        set_name, instance = item.key
        for wanted in self.ids:
            left, slash, right = wanted.strip().rpartition("/")
            if slash and left.lower() == set_name.lower() and right == instance:
                return True
            if not slash and right == instance:
                return True
        return False

    def accepts(self, item: ScoredTask) -> bool:
        task = item.task
        lowered = [s.lower() for s in self.sets]
        if lowered and task.set.lower() not in lowered:
            return False
        if self.dialects and task.dialect.lower() not in [d.lower() for d in self.dialects]:
            return False
        categories = [c.lower() for c in self.categories]
        if categories and task.category.lower() not in categories:
            return False
        if self.with_solution_only and item.solution is None:
            return False
        return self._ids_match(item)

    def apply(self, items: list[ScoredTask]) -> list[ScoredTask]:
        """The accepted items, in order, at most ``limit`` of them."""
        chosen = [item for item in items if self.accepts(item)]
        return chosen if self.limit is None else chosen[: self.limit]
