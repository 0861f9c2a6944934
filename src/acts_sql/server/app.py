"""The FastAPI application: `create_app(config)`.

The app owns its run registry (``app.state.registry``) and through it the
run store; nothing else in the service is mutable or global. Middleware
order, outermost first: auth, body size limit, then FastAPI's routing and
error handlers.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable

from fastapi import FastAPI

from acts_sql.llm.base import LLMBackend
from acts_sql.server.auth import TokenSet
from acts_sql.server.catalog import BackendFactory, DatabaseCatalog
from acts_sql.server.config import ServiceConfig
from acts_sql.server.errors import install_error_handlers
from acts_sql.server.execution import make_work
from acts_sql.server.middleware import AuthMiddleware, BodyLimitMiddleware
from acts_sql.server.routes import build_router
from acts_sql.server.runs import RunRegistry
from acts_sql.server.store import RunJournal, open_store

API_VERSION = "1.0.0"
SWEEP_SECONDS = 0.5
DESCRIPTION = """\
Corrects SQL against configured databases with the ACTS-SQL Central Agent.

Authenticate with `Authorization: Bearer <token>`. Errors are JSON:
`{"error": {"code": "<stable code>", "message": "..."}}`. See docs/SERVICE.md.
"""


def create_app(
    config: ServiceConfig,
    *,
    llm: Callable[[], LLMBackend] | None = None,
    check: bool = True,
) -> FastAPI:
    """The service for `config`.

    `llm` overrides how each run's backend is made (tests inject scripted
    backends this way). With `check`, every database is opened once and the
    LLM SPEC is parsed now: a bad one raises (ConfigError, DatabaseOpenError)
    before the service starts; throw-away copies that dead processes left are
    removed then (`DatabaseCatalog.sweep`). The run store is opened in any case (runs a
    previous process left in progress become interrupted); one that cannot
    be opened raises ConfigError.
    """
    catalog = DatabaseCatalog(config.databases)
    backends = BackendFactory(config.llm, llm)
    if check:
        catalog.check()
        catalog.sweep()
        backends.check()
    limits = config.limits
    store = open_store(config.store)
    registry = RunRegistry(
        make_work(catalog, backends),
        max_active=limits.max_concurrent_runs,
        keep_finished=config.store.max_runs,
        max_age_s=config.store.max_age_s,
        grace_seconds=limits.grace_seconds,
        journal=None if store is None else RunJournal(store, max_batch=config.store.max_batch),
    )

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        sweeper = asyncio.create_task(_sweep(registry))
        try:
            yield
        finally:
            sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sweeper
            registry.close()

    app = FastAPI(
        title="acts-sql",
        version=API_VERSION,
        description=DESCRIPTION,
        docs_url=None,  # the interactive docs load their scripts from a CDN
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.registry = registry
    app.state.catalog = catalog
    install_error_handlers(app)
    app.include_router(build_router(registry, catalog, limits))
    app.add_middleware(BodyLimitMiddleware, max_bytes=limits.max_body_bytes)
    app.add_middleware(AuthMiddleware, tokens=TokenSet(config.auth.tokens))
    return app


async def _sweep(registry: RunRegistry) -> None:
    """Marks runs past their hard deadline as timed out."""
    while True:
        await asyncio.sleep(SWEEP_SECONDS)
        registry.expire_overdue()


def openapi_document() -> dict[str, object]:
    """The service's OpenAPI document (it does not depend on the configuration)."""
    from acts_sql.server.config import (
        MEMORY_STORE,
        AuthConfig,
        DatabaseConfig,
        LLMConfig,
        StoreConfig,
    )

    placeholder = ServiceConfig(
        llm=LLMConfig(spec="scripted:unused.json"),
        auth=AuthConfig(tokens=["placeholder-token-0000"]),
        databases={"example": DatabaseConfig(url="sqlite:///unused.db")},
        store=StoreConfig(url=MEMORY_STORE),
    )
    return create_app(placeholder, check=False).openapi()
