"""Runs as rows: what the journal asks the store to write, and runs read back.

A run is one row of ``acts_sql_runs`` (its request as JSON, its status,
times, error, and its result as JSON without the trace) and one row of
``acts_sql_run_events`` per trace event. A finished run's trace is its
events, so it is stored once.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter

from acts_sql.engine.events import EVENTS, TraceEvent
from acts_sql.engine.options import CorrectionOptions
from acts_sql.engine.result import CorrectionResult
from acts_sql.server.errors import ErrorBody
from acts_sql.server.models import RunState
from acts_sql.server.run import Run, RunSpec, Settlement

_SPEC = TypeAdapter(RunSpec)

RUN_COLUMNS = (
    "run_id, view_key, status, spec, created_at, started_at, finished_at, event_count, error"
)
"""The columns of a run's row, in the order `run_from_row` reads them (then `result`)."""


@dataclass
class Receipt:
    """Set when the write it came with is committed (`ok`) or has failed."""

    event: threading.Event = field(default_factory=threading.Event)
    ok: bool = False


@dataclass(frozen=True)
class Created:
    run: Run


@dataclass(frozen=True)
class Event:
    run_id: str
    event: TraceEvent


@dataclass(frozen=True)
class Ended:
    run: Run
    ending: Settlement
    events: list[TraceEvent]
    """The ending's events the store was not sent as they happened."""
    receipt: Receipt | None = None


Op = Created | Event | Ended


def created_row(run: Run) -> tuple[Any, ...]:
    spec = _SPEC.dump_json(run.spec).decode()
    return (run.id, run.view_key, run.state.value, spec, run.created_at, run.started_at)


def event_row(run_id: str, event: TraceEvent) -> tuple[Any, ...]:
    return (run_id, event.seq, event.model_dump_json())


def ended_row(run: Run, ending: Settlement) -> tuple[Any, ...]:
    result = None if ending.result is None else ending.result.model_dump_json(exclude={"trace"})
    error = None if ending.error is None else ending.error.model_dump_json()
    return (
        ending.state.value,
        run.started_at,
        ending.finished_at,
        len(ending.events),
        result,
        error,
        run.id,
    )


def run_from_row(
    row: Sequence[Any], events: Sequence[str] | None = None, result: str | None = None
) -> Run:
    """A run read back: with `events` (JSON, by seq) in full, else listed by status only."""
    run_id, view_key, status, spec, created_at, started_at, finished_at, count, error = row[:9]
    trace = _gap_free([EVENTS.validate_json(e) for e in events or ()])
    full = None
    if result is not None:
        full = CorrectionResult.model_validate_json(result).model_copy(update={"trace": trace})
    ending = Settlement(
        state=RunState(status),
        finished_at=finished_at,
        events=trace,
        result=full,
        error=None if error is None else ErrorBody.model_validate_json(error),
    )
    return Run.ended(
        spec_from_json(spec),
        ending,
        run_id=run_id,
        view_key=view_key,
        created_at=created_at,
        started_at=started_at,
        event_count=None if events is not None else int(count),
    )


def spec_from_json(text: str) -> RunSpec:
    """A run's spec as stored, also one written with its options beside the other fields."""
    data = json.loads(text)
    if "options" not in data:
        known = {field.name for field in dataclasses.fields(RunSpec)}
        flat = {name: data.pop(name) for name in set(data) - known}
        data["options"] = CorrectionOptions.of(**flat)
    return _SPEC.validate_python(data)


def _gap_free(events: list[TraceEvent]) -> list[TraceEvent]:
    """The events numbered 0, 1, 2, ... up to the first one missing."""
    prefix = []
    for expected, event in enumerate(events):
        if event.seq != expected:
            break
        prefix.append(event)
    return prefix
