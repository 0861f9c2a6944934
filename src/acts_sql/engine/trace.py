"""Trace events: every step of a correction, in order.

The CLI, the JSON output, the HTML viewer and the benchmark reports all read
these events (their types: `acts_sql.engine.events`). Each LLM call and each
statement is one event with its purpose, tokens and time. Recording is
thread-safe (unit checks run in parallel).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from acts_sql.engine.events import EVENT_TYPES, EventData, TraceEvent

Listener = Callable[[TraceEvent], None]


class Trace:
    """An append-only, thread-safe list of events with optional listeners."""

    def __init__(self, listeners: list[Listener] | None = None) -> None:
        self._events: list[TraceEvent] = []
        self._lock = threading.Lock()
        self._start = time.perf_counter()
        self._listeners = list(listeners or [])

    def emit(
        self,
        data: EventData,
        *,
        node: str | None = None,
        tool: str | None = None,
        purpose: str | None = None,
        summary: str = "",
    ) -> TraceEvent:
        """Record the event whose payload is `data` (its type says the kind)."""
        with self._lock:
            event = EVENT_TYPES[type(data)](
                seq=len(self._events),
                t=round(time.perf_counter() - self._start, 6),
                node=node,
                tool=tool,
                purpose=purpose,
                summary=summary,
                data=data,
            )
            self._events.append(event)
        for listener in self._listeners:
            listener(event)
        return event

    @property
    def events(self) -> list[TraceEvent]:
        with self._lock:
            return list(self._events)
