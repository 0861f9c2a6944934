"""`acts-sql serve`: the correction service (needs the `server` extra)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from acts_sql.cli.console import fail

GRACEFUL_SHUTDOWN_SECONDS = 5


def serve(
    config: Annotated[
        Path | None, typer.Option(help="the service's TOML configuration (see docs/SERVICE.md)")
    ] = None,
    host: Annotated[str, typer.Option(help="address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port to listen on", min=0, max=65535)] = 8000,
    openapi: Annotated[
        bool, typer.Option("--openapi", help="print the OpenAPI document and exit")
    ] = False,
) -> None:
    """Serve POST /v1/correct, /v1/generate, run events and the debugging-tree viewer."""
    try:
        import uvicorn

        from acts_sql.errors import ActsSqlError
        from acts_sql.server import create_app, load_config, openapi_document
        from acts_sql.server.access_log import uvicorn_log_config
    except ImportError as exc:
        raise fail(
            f"acts-sql serve needs the server extra ({exc.name}): pip install 'acts-sql[server]'"
        ) from None
    if openapi:
        sys.stdout.write(json.dumps(openapi_document(), indent=2) + "\n")
        return
    if config is None:
        raise fail("give the service's configuration: --config PATH")
    try:
        app = create_app(load_config(config))
    except ActsSqlError as exc:
        raise fail(str(exc)) from None
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="info",
        log_config=uvicorn_log_config(),
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
    )
