"""Fixtures for the integration tests; the engines themselves are in `live.py`.

An autouse fixture checks after every test that the checksums of all user
tables are unchanged and that no sandbox copy was left behind.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from live import ENGINES, Engine, engine_or_skip, make_engines


@pytest.fixture(scope="session")
def live_engines(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Engine]:
    """Every engine that is available in this run, by name."""
    return make_engines(tmp_path_factory.mktemp("sqlite"))


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest, live_engines: dict[str, Engine]) -> Engine:
    return engine_or_skip(live_engines, request.param)


@pytest.fixture(params=["postgresql", "mysql"])
def server(request: pytest.FixtureRequest, live_engines: dict[str, Engine]) -> Engine:
    return engine_or_skip(live_engines, request.param)


@pytest.fixture(autouse=True)
def data_intact(live_engines: dict[str, Engine]) -> Iterator[None]:
    """After every test: all user tables unchanged, no sandbox copy left behind."""
    before = {name: engine.checksum() for name, engine in live_engines.items()}
    yield
    for name, engine in live_engines.items():
        assert engine.checksum() == before[name], f"{name}: user data changed"
        assert engine.copies() == [], f"{name}: sandbox copies left behind"
