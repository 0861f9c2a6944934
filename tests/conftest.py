"""Shared fixtures: the demo database and its tasks."""

from __future__ import annotations

from typing import Any

import pytest

from acts_sql.demo import demo_db_path, load_tasks


@pytest.fixture
def demo_db() -> str:
    return f"sqlite:///{demo_db_path()}"


@pytest.fixture
def demo_tasks() -> dict[str, Any]:
    return {t.id: t for t in load_tasks()}
