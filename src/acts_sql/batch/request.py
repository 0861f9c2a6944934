"""What one batch is asked to do: `BatchRequest` (its own module, so that the runner and the
summary it writes can both name it without importing each other)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from acts_sql.batch.worker import BatchSettings
from acts_sql.scale import ExecutorKind


class BatchRequest(BaseModel):
    """Everything one batch needs."""

    input: Path
    out: Path
    databases: Path | None = None
    settings: BatchSettings = Field(default_factory=BatchSettings)
    executor: ExecutorKind = ExecutorKind.LOCAL
    workers: int = Field(1, ge=1, le=256)
    ray_address: str | None = None
