"""The correction service: `acts-sql serve` (FastAPI + uvicorn).

`load_config(path)` reads and validates the TOML configuration;
`create_app(config)` builds the ASGI app. See docs/SERVICE.md.
"""

from acts_sql.server.app import create_app, openapi_document
from acts_sql.server.config import ServiceConfig, load_config

__all__ = ["ServiceConfig", "create_app", "load_config", "openapi_document"]
