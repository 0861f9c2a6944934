"""Server-sent events: a run's trace, in seq order, live and replayed.

Each trace event is one SSE message ``event: trace``, ``id: <seq>``, ``data:
<the TraceEvent as JSON>``. The stream starts after ``Last-Event-ID`` (what a
reconnecting EventSource sends) or the ``after`` query parameter, else at
seq 0, so a reader that joins late or reconnects gets every event exactly
once. When the run is over, ``event: end`` carries its status (and error)
and the stream closes. Comments (``: ping``) keep idle connections open.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from acts_sql.engine.events import TraceEvent
from acts_sql.server.runs import Run

RETRY_MS = 2000
PING_SECONDS = 15.0


def format_event(event: TraceEvent) -> str:
    data = event.model_dump_json()
    return f"id: {event.seq}\nevent: trace\ndata: {data}\n\n"


def format_end(run: Run) -> str:
    payload: dict[str, object] = {"status": run.state.value, "events": run.event_count}
    if run.error is not None:
        payload["error"] = run.error.model_dump(mode="json")
    return f"event: end\ndata: {json.dumps(payload)}\n\n"


async def stream_events(
    run: Run, start: int = 0, *, ping_seconds: float = PING_SECONDS
) -> AsyncIterator[str]:
    """The run's events from seq `start`, then `end`; see the module docstring."""
    yield f"retry: {RETRY_MS}\n\n"
    cursor = max(0, start)
    while True:
        version = run.version
        events, over = run.events_from(cursor)
        for event in events:
            yield format_event(event)
        cursor += len(events)
        if over and not events:
            yield format_end(run)
            return
        if not events and not await run.wait_changed(version, ping_seconds):
            yield ": ping\n\n"
