"""Fixtures for the service tests: the Figure 3 task and a running service."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from acts_sql.demo import DemoTask, get_task
from server.service import Service, running_service, service_config


@pytest.fixture
def figure3() -> DemoTask:
    return get_task("figure3")


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    """The service with the Figure 3 script, the demo database and default limits."""
    with running_service(service_config(tmp_path)) as svc:
        yield svc
