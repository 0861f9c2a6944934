"""The HTTP endpoints: correct, generate, runs, events, the viewer page, health."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Header, Query, Request, Security
from fastapi.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from fastapi.security import HTTPBearer

from acts_sql.engine.budget import Budget
from acts_sql.engine.options import CorrectionOptions
from acts_sql.errors import ConfigError
from acts_sql.server.auth import Access, check_view_key
from acts_sql.server.catalog import DatabaseCatalog
from acts_sql.server.config import LimitsConfig
from acts_sql.server.errors import ApiError, ErrorCode, ErrorEnvelope, error_response
from acts_sql.server.middleware import request_access
from acts_sql.server.models import (
    REQUEST_OPTIONS,
    ChoiceRequest,
    CorrectionResponse,
    CorrectRequest,
    GenerateRequest,
    Health,
    RunLinks,
    RunList,
    RunState,
    RunStatus,
)
from acts_sql.server.runs import Run, RunRegistry, RunSpec
from acts_sql.server.sse import stream_events
from acts_sql.sql.languages import get_language
from acts_sql.viewer import content_security_policy, render_html, render_live_html

# documents the scheme in OpenAPI; AuthMiddleware does the checking
bearer = HTTPBearer(auto_error=False, description="a token from the service configuration")
SECURED = [Security(bearer)]

_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorEnvelope, "description": "unauthorized, invalid_token"},
    413: {"model": ErrorEnvelope, "description": "body_too_large"},
    422: {"model": ErrorEnvelope, "description": "invalid_json, unknown_field, invalid_request"},
}
_RUN_ERRORS: dict[int | str, dict[str, Any]] = {
    **_ERRORS,
    400: {
        "model": ErrorEnvelope,
        "description": "unknown_database, dialect_mismatch, budget_over_limit, bad_input",
    },
    429: {"model": ErrorEnvelope, "description": "too_many_runs (with Retry-After)"},
    503: {"model": ErrorEnvelope, "description": "database_unavailable, llm_unavailable"},
    504: {"model": ErrorEnvelope, "description": "run_timeout"},
}
_READ_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorEnvelope, "description": "unauthorized, invalid_token, invalid_key"},
    404: {"model": ErrorEnvelope, "description": "run_not_found"},
    422: {"model": ErrorEnvelope, "description": "invalid_request"},
}
SECURITY_HEADERS = {
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}


def links(run: Run) -> RunLinks:
    return RunLinks(
        run=f"/v1/runs/{run.id}",
        events=f"/v1/runs/{run.id}/events",
        viewer=f"/runs/{run.id}?key={quote(run.view_key)}",
    )


def run_status(run: Run) -> RunStatus:
    return RunStatus(
        run_id=run.id,
        status=run.state,
        kind=run.spec.kind,
        database=run.spec.database,
        created_at=run.created_at,
        started_at=run.started_at,
        finished_at=run.finished_at,
        events=run.event_count,
        links=links(run),
        error=run.error,
    )


def finished_body(run: Run) -> dict[str, Any]:
    """A finished run as JSON: a `CorrectionResponse` (built as a dict: no second validation)."""
    assert run.result is not None
    body = run.result.model_dump(mode="json")
    body.update(
        run_id=run.id,
        status=RunState.FINISHED.value,
        database=run.spec.database,
        links=links(run).model_dump(mode="json"),
    )
    return body


def run_spec(
    body: CorrectRequest | GenerateRequest, catalog: DatabaseCatalog, limits: LimitsConfig
) -> RunSpec:
    """The run a request asks for, checked against the catalog and the service's limits."""
    actual = catalog.resolve(body.database, body.dialect)
    if body.language is not None:
        check_language(body.language, actual)
    options = bounded_options(body.options, limits)
    for name in ("question", "sql"):
        text = getattr(body, name, None) or ""
        if len(text) > limits.max_text_chars:
            raise ApiError(
                ErrorCode.BAD_INPUT,
                f"{name} is longer than this service's maximum of {limits.max_text_chars} "
                "characters",
            )
    return RunSpec(
        kind="correct" if isinstance(body, CorrectRequest) else "generate",
        database=body.database,
        question=body.question,
        sql=body.sql if isinstance(body, CorrectRequest) else None,
        dialect=body.dialect,
        options=options,
        language=body.language,
        ask=body.ask,
    )


def bounded_options(options: CorrectionOptions, limits: LimitsConfig) -> CorrectionOptions:
    """A request's options within the service's limits: a budget limit left out is the
    service's maximum, one above it is refused (never silently lowered), and so is an
    option a request may not set."""
    refused = sorted(options.model_fields_set - REQUEST_OPTIONS)
    if refused:
        settable = ", ".join(sorted(REQUEST_OPTIONS))
        raise ApiError(
            ErrorCode.UNKNOWN_FIELD,
            f"unknown field 'options.{refused[0]}': a request's options are {settable}",
        )
    asked = options.budget.model_fields_set
    limited = {}
    for name, most in limits.budget_maxima().items():
        value = getattr(options.budget, name) if name in asked else most
        if value > most:
            raise ApiError(
                ErrorCode.BUDGET_OVER_LIMIT,
                f"{name} {value:g} is above this service's maximum of {most:g}",
            )
        limited[name] = value
    return options.model_copy(update={"budget": Budget(**limited)})


def check_language(name: str, dialect: str) -> None:
    """ApiError unless `name` is an installed query language that runs on `dialect` (the
    configured database's, when known)."""
    try:
        language = get_language(name)
    except ConfigError as exc:
        raise ApiError(ErrorCode.BAD_INPUT, str(exc)) from None
    if dialect and language.targets and dialect not in language.targets:
        raise ApiError(
            ErrorCode.BAD_INPUT,
            f"{language.display_name} does not run on this database ({dialect}); it runs on "
            + ", ".join(language.targets),
        )


def build_router(
    registry: RunRegistry, catalog: DatabaseCatalog, limits: LimitsConfig
) -> APIRouter:
    """The service's routes over one registry, catalog and set of limits."""
    router = APIRouter()
    _add_run_routes(router, registry, catalog, limits)
    _add_read_routes(router, registry)
    _add_event_route(router, registry)
    _add_choice_route(router, registry)
    _add_viewer_route(router, registry)

    @router.get("/healthz", response_model=Health, summary="Liveness", tags=["service"])
    async def healthz() -> Health:
        return Health(active_runs=registry.active, max_concurrent_runs=registry.max_active)

    return router


def _add_run_routes(
    router: APIRouter, registry: RunRegistry, catalog: DatabaseCatalog, limits: LimitsConfig
) -> None:
    """POST /v1/correct and /v1/generate: start a run, and wait for it unless told not to."""

    async def start(body: CorrectRequest | GenerateRequest) -> Response:
        run = registry.submit(run_spec(body, catalog, limits))
        if not body.wait:
            return JSONResponse(
                run_status(run).model_dump(mode="json"),
                status_code=202,
                headers={"Location": f"/v1/runs/{run.id}"},
            )
        # waiting never cancels the run: if this client goes away, it goes on
        await run.wait_done()
        if run.state is RunState.FINISHED:
            return JSONResponse(finished_body(run))
        assert run.error is not None
        return error_response(run.error.code, run.error.message, {"X-Run-Id": run.id})

    @router.post(
        "/v1/correct",
        dependencies=SECURED,
        response_model=CorrectionResponse,
        responses={202: {"model": RunStatus, "description": "wait: false"}, **_RUN_ERRORS},
        summary="Correct a SQL statement",
        tags=["runs"],
    )
    async def post_correct(body: CorrectRequest) -> Response:
        """The same object as `acts-sql fix --json`, plus `run_id`, `status` and `links`."""
        return await start(body)

    @router.post(
        "/v1/generate",
        dependencies=SECURED,
        response_model=CorrectionResponse,
        responses={202: {"model": RunStatus, "description": "wait: false"}, **_RUN_ERRORS},
        summary="Write SQL for a question (text-to-SQL), then correct it",
        tags=["runs"],
    )
    async def post_generate(body: GenerateRequest) -> Response:
        return await start(body)


def _readable(registry: RunRegistry, request: Request, run_id: str, key: str | None) -> Run:
    """The run a request may read: any run with the service token, else the run its view key
    opens."""
    run = registry.get(run_id)
    if request_access(request.scope) is Access.TOKEN:
        if run is None:
            raise ApiError(ErrorCode.RUN_NOT_FOUND, f"no run {run_id!r} (finished runs expire)")
        return run
    if run is None or not check_view_key(key, run.view_key):
        raise ApiError(ErrorCode.INVALID_KEY, "the view key does not open this run")
    return run


def _add_read_routes(router: APIRouter, registry: RunRegistry) -> None:
    """GET /v1/runs and /v1/runs/{id}."""

    @router.get(
        "/v1/runs",
        dependencies=SECURED,
        response_model=RunList,
        responses=_ERRORS,
        summary="The most recent runs, newest first",
        tags=["runs"],
    )
    async def list_runs(limit: Annotated[int, Query(ge=1, le=1000)] = 50) -> RunList:
        return RunList(runs=[run_status(r) for r in registry.recent(limit)])

    @router.get(
        "/v1/runs/{run_id}",
        dependencies=SECURED,
        response_model=CorrectionResponse | RunStatus,
        responses=_READ_ERRORS,
        summary="A run: its result when finished, else its status",
        tags=["runs"],
    )
    async def get_run(
        request: Request,
        run_id: str,
        key: Annotated[str | None, Query(description="the run's view key")] = None,
    ) -> Response:
        run = _readable(registry, request, run_id, key)
        if run.state is RunState.FINISHED:
            body = finished_body(run)
        else:
            body = run_status(run).model_dump(mode="json")
        return JSONResponse(body, headers={"Cache-Control": "no-store"})


def _add_choice_route(router: APIRouter, registry: RunRegistry) -> None:
    """POST /v1/runs/{id}/choice: the person's reading, for a run that waits for it."""

    @router.post(
        "/v1/runs/{run_id}/choice",
        dependencies=SECURED,
        response_model=RunStatus,
        responses=_READ_ERRORS,
        summary="Choose a reading for a run that emitted choice_needed",
        tags=["runs"],
    )
    async def post_choice(
        request: Request,
        run_id: str,
        body: ChoiceRequest,
        key: Annotated[str | None, Query(description="the run's view key")] = None,
    ) -> RunStatus:
        run = _readable(registry, request, run_id, key)
        slot = run.choice
        offered = slot.offered() if slot is not None else []
        if slot is None or not offered:
            raise ApiError(ErrorCode.NOT_WAITING, f"run {run_id!r} does not wait for a choice")
        if not slot.answer(body.reading):
            raise ApiError(
                ErrorCode.UNKNOWN_READING,
                f"reading {body.reading!r} was not offered: choose one of {offered}",
            )
        return run_status(run)


def _add_event_route(router: APIRouter, registry: RunRegistry) -> None:
    """GET /v1/runs/{id}/events: the trace as server-sent events, live or replayed."""

    @router.get(
        "/v1/runs/{run_id}/events",
        dependencies=SECURED,
        responses={
            200: {
                "content": {"text/event-stream": {}},
                "description": "`trace` messages (id = seq, data = a trace event), then `end`",
            },
            **_READ_ERRORS,
        },
        response_class=StreamingResponse,
        summary="The run's trace events as server-sent events, live or replayed",
        tags=["runs"],
    )
    async def get_events(
        request: Request,
        run_id: str,
        after: Annotated[int | None, Query(ge=-1, description="start after this seq")] = None,
        key: Annotated[str | None, Query(description="the run's view key")] = None,
        last_event_id: Annotated[str | None, Header()] = None,
    ) -> StreamingResponse:
        run = _readable(registry, request, run_id, key)
        start = 0 if after is None else after + 1
        if last_event_id is not None and last_event_id.strip().isdigit():
            start = max(start, int(last_event_id) + 1)
        return StreamingResponse(
            stream_events(run, start),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )


def _add_viewer_route(router: APIRouter, registry: RunRegistry) -> None:
    """GET /runs/{id}: the debugging-tree page, live while the run goes on."""

    @router.get(
        "/runs/{run_id}",
        response_class=HTMLResponse,
        responses=_READ_ERRORS,
        summary="The debugging-tree page of a run (live while it runs)",
        tags=["viewer"],
    )
    async def get_page(
        request: Request,
        run_id: str,
        key: Annotated[str | None, Query(description="the run's view key")] = None,
    ) -> HTMLResponse:
        run = _readable(registry, request, run_id, key)
        if run.state is RunState.FINISHED and run.result is not None:
            page = render_html(run.result)
        else:
            suffix = f"?key={quote(run.view_key)}"
            page = render_live_html(
                run_id=run.id,
                events_url=f"/v1/runs/{run.id}/events{suffix}",
                result_url=f"/v1/runs/{run.id}{suffix}",
                question=run.spec.question,
                choice_url=f"/v1/runs/{run.id}/choice{suffix}" if run.spec.ask else None,
            )
        csp = content_security_policy() + "; frame-ancestors 'none'"
        return HTMLResponse(page, headers={**SECURITY_HEADERS, "Content-Security-Policy": csp})
