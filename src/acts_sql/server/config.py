"""The service's configuration: a TOML file, validated with pydantic.

    [llm]
    spec = "openai:gpt-4o-mini"          # as for `acts-sql fix --llm`

    [auth]
    tokens = ["a-long-random-token"]     # and/or ACTS_SQL_TOKENS="t1,t2"

    [limits]
    max_concurrent_runs = 4

    [databases.shop]
    url = "sqlite:////srv/shop.db"
    writes = "none"                      # or "copy": writes run on a throw-away copy

    [store]                              # where runs are kept (default: a SQLite file
    max_runs = 1000                      # next to this file, <name>.runs.sqlite)

Everything a run may touch is named here; clients only name a configured
database. A bad file raises ConfigError with a one-line reason.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from acts_sql.engine.budget import DEFAULT_MAX_DEPTH, DEFAULT_MAX_LLM_CALLS, DEFAULT_MAX_NODES
from acts_sql.errors import ConfigError
from acts_sql.sql.dialects import get_dialect

TOKENS_ENV = "ACTS_SQL_TOKENS"
"""Environment variable with extra bearer tokens, comma-separated."""
MIN_TOKEN_CHARS = 16
DATABASE_NAME = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"
"""A configured database's name: what clients send. Never a URL or a path."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LLMConfig(_Strict):
    """The LLM backend: an LLM SPEC as for `acts-sql fix --llm`, and its options."""

    spec: str = Field(min_length=1, description="openai:MODEL, scripted:PATH, local:NAME")
    base_url: str | None = Field(None, description="OpenAI-compatible endpoint (openai: only)")
    timeout: float | None = Field(None, gt=0, description="seconds per LLM request (openai:)")
    max_retries: int | None = Field(None, ge=0, le=10, description="retries per request (openai:)")
    delay_s: float | None = Field(
        None, ge=0, le=60, description="simulated latency per call (scripted: only)"
    )

    @property
    def scheme(self) -> str:
        return self.spec.partition(":")[0].strip().lower()

    def options(self) -> dict[str, object]:
        """The keyword options for `parse_llm_spec`, those that were given."""
        names = ("base_url", "timeout", "max_retries", "delay_s")
        return {n: getattr(self, n) for n in names if getattr(self, n) is not None}


class AuthConfig(_Strict):
    tokens: list[str] = Field(default_factory=list, description="accepted bearer tokens")


class LimitsConfig(_Strict):
    """What one client may ask for, and how much the service does at once."""

    max_concurrent_runs: int = Field(4, ge=1, le=256)
    max_body_bytes: int = Field(256 * 1024, ge=1024, le=64 * 1024 * 1024)
    max_run_seconds: float = Field(300.0, gt=0, le=24 * 3600)
    """Per-run wall-time budget: the maximum (and default) `max_seconds` of a request."""
    grace_seconds: float = Field(10.0, ge=0, le=3600)
    """A run still busy this long after its budget is reported as timed out."""
    max_llm_calls: int = Field(DEFAULT_MAX_LLM_CALLS, ge=1, le=10_000)
    max_nodes: int = Field(DEFAULT_MAX_NODES, ge=1, le=10_000)
    max_depth: int = Field(DEFAULT_MAX_DEPTH, ge=1, le=100)
    max_text_chars: int = Field(100_000, ge=100)
    """Longest `question` or `sql` accepted."""
    keep_finished_runs: int = Field(1000, ge=1, le=1_000_000)
    """Deprecated: the default of `[store] max_runs` (finished runs kept)."""

    def budget_maxima(self) -> dict[str, float]:
        """The most a request's `options.budget` may ask for, by limit (and what it gets
        for a limit it leaves out)."""
        return {
            "max_llm_calls": self.max_llm_calls,
            "max_nodes": self.max_nodes,
            "max_depth": self.max_depth,
            "max_seconds": self.max_run_seconds,
        }


class DatabaseConfig(_Strict):
    """One database clients may name."""

    url: str = Field(min_length=1, description="database URL or file path")
    dialect: str | None = None
    writes: Literal["none", "copy"] = "none"
    """none: read-only; copy: statements that write run on a throw-away copy."""
    timeout: float | None = Field(None, gt=0, le=3600, description="seconds per statement")
    max_rows: int | None = Field(None, ge=1, le=1_000_000)

    @field_validator("dialect")
    @classmethod
    def _known_dialect(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            return get_dialect(value).name
        except ConfigError as exc:
            raise ValueError(str(exc)) from None


DatabaseName = Annotated[str, Field(pattern=DATABASE_NAME)]

MEMORY_STORE = "memory"
POSTGRES_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg")
DEFAULT_CONFIG_NAME = "acts-sql.toml"
"""Where a configuration not read from a file is taken to be (for its default store)."""
STORE_SUFFIX = ".runs.sqlite"
SECONDS_PER_DAY = 86_400.0
"""The default store: the configuration file's name with this suffix, next to it."""


class StoreConfig(_Strict):
    """Where runs (request, status, result, events) are kept, and for how long."""

    url: str | None = Field(
        None, min_length=1, description='postgresql://..., sqlite:///PATH or "memory"'
    )
    path: str | None = Field(
        None, min_length=1, description="a SQLite file, relative to the configuration file"
    )
    max_runs: int = Field(1000, ge=1, le=100_000_000)
    """Finished runs kept; beyond it the oldest are deleted first."""
    max_age_days: float | None = Field(None, gt=0, le=100_000)
    """Finished runs older than this (since they were created) are deleted."""
    max_batch: int = Field(512, ge=1, le=100_000)
    """The most writes committed in one transaction (1: every event on its own)."""

    @field_validator("url")
    @classmethod
    def _known_store(cls, value: str | None) -> str | None:
        if value is None or value == MEMORY_STORE:
            return value
        scheme = value.partition("://")[0].lower() if "://" in value else ""
        if scheme != "sqlite" and scheme not in POSTGRES_SCHEMES:
            raise ValueError('give postgresql://..., sqlite:///PATH or "memory"')
        return value

    @model_validator(mode="after")
    def _one_place(self) -> StoreConfig:
        if self.url is not None and self.path is not None:
            raise ValueError("give either url or path, not both")
        return self

    @property
    def max_age_s(self) -> float | None:
        return None if self.max_age_days is None else self.max_age_days * SECONDS_PER_DAY

    @property
    def kind(self) -> Literal["memory", "sqlite", "postgresql"]:
        if self.url == MEMORY_STORE:
            return "memory"
        if self.url is not None and self.url.partition("://")[0].lower() in POSTGRES_SCHEMES:
            return "postgresql"
        return "sqlite"

    def located(self, config_file: Path) -> StoreConfig:
        """This store with its SQLite file made absolute (default: next to `config_file`)."""
        if self.url is not None:
            return self
        default = config_file.with_name(config_file.stem + STORE_SUFFIX)
        path = default if self.path is None else config_file.parent / Path(self.path).expanduser()
        return self.model_copy(update={"path": str(path.absolute())})


class ServiceConfig(_Strict):
    llm: LLMConfig
    auth: AuthConfig = Field(default_factory=AuthConfig)
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    databases: dict[DatabaseName, DatabaseConfig]
    store: StoreConfig = Field(default_factory=StoreConfig)

    @model_validator(mode="before")
    @classmethod
    def _deprecated_keep(cls, data: Any) -> Any:
        """`[limits] keep_finished_runs` (the old in-memory bound) is `max_runs`'s default."""
        if not isinstance(data, Mapping):
            return data
        limits, store = data.get("limits"), data.get("store", {})
        if (
            isinstance(limits, Mapping)
            and "keep_finished_runs" in limits
            and isinstance(store, Mapping)
            and "max_runs" not in store
        ):
            return {**data, "store": {**store, "max_runs": limits["keep_finished_runs"]}}
        return data

    @field_validator("databases")
    @classmethod
    def _some_database(cls, value: dict[str, DatabaseConfig]) -> dict[str, DatabaseConfig]:
        if not value:
            raise ValueError("configure at least one [databases.<name>] table")
        return value

    @field_validator("auth")
    @classmethod
    def _strong_tokens(cls, value: AuthConfig) -> AuthConfig:
        for token in value.tokens:
            check_token(token)
        return value


def check_token(token: str) -> None:
    """ValueError unless `token` is acceptable as a bearer token."""
    if len(token) < MIN_TOKEN_CHARS:
        raise ValueError(f"tokens must have at least {MIN_TOKEN_CHARS} characters")
    if not token.isascii() or not token.isprintable() or " " in token:
        raise ValueError("tokens must be printable ASCII without spaces")


def load_config(path: str | Path, environ: Mapping[str, str] | None = None) -> ServiceConfig:
    """Read and validate the TOML file at `path`; tokens from ACTS_SQL_TOKENS are added.

    Raises ConfigError with a one-line reason (file, key, problem).
    """
    shown = str(path)
    try:
        raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"config {shown}: file not found", path=shown) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"config {shown}: cannot be read ({exc})", path=shown) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config {shown}: not valid TOML ({exc})", path=shown) from None
    return parse_config(raw, environ, source=shown, config_file=Path(path))


def parse_config(
    raw: Mapping[str, object],
    environ: Mapping[str, str] | None = None,
    *,
    source: str = "config",
    config_file: Path | None = None,
) -> ServiceConfig:
    """Validate a parsed TOML document (see `load_config`).

    A relative (or the default) SQLite store is placed next to `config_file`
    (default: ./acts-sql.toml, so ./acts-sql.runs.sqlite).
    """
    env = os.environ if environ is None else environ
    extra = [t.strip() for t in env.get(TOKENS_ENV, "").split(",") if t.strip()]
    data = dict(raw)
    section = data.get("auth")
    if extra and (section is None or isinstance(section, Mapping)):
        auth = dict(section or {})
        listed = auth.get("tokens")
        if listed is None or isinstance(listed, list):  # anything else: pydantic says why
            auth["tokens"] = [*(listed or []), *extra]
        data["auth"] = auth
    try:
        config = ServiceConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"config {source}: {_first_problem(exc)}", path=source) from None
    if not config.auth.tokens:
        raise ConfigError(
            f"config {source}: no bearer token: set [auth] tokens or {TOKENS_ENV}", path=source
        )
    store = config.store.located(config_file or Path(DEFAULT_CONFIG_NAME))
    return config.model_copy(update={"store": store})


def _first_problem(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error["loc"]) or "(top level)"
    message = str(error["msg"])
    if error["type"] == "extra_forbidden":
        message = "unknown key"
    elif error["type"] == "missing":
        message = "missing"
    return f"{where}: {message}"
