"""One run's work: open the configured database, correct, close."""

from __future__ import annotations

from collections.abc import Callable

from acts_sql.api import correct
from acts_sql.engine.events import TraceEvent
from acts_sql.engine.options import DEFAULT_TEMPERATURE
from acts_sql.engine.result import CorrectionResult
from acts_sql.server.catalog import BackendFactory, DatabaseCatalog
from acts_sql.server.runs import RunSpec, Work


def make_work(catalog: DatabaseCatalog, backends: BackendFactory) -> Work:
    """The registry's work function for this catalog and LLM backend."""

    def work(spec: RunSpec, listener: Callable[[TraceEvent], None]) -> CorrectionResult:
        executor = catalog.open(spec.database)
        try:
            return correct(
                executor,
                spec.question,
                spec.sql,
                dialect=spec.dialect,
                language=spec.language,
                llm=backends(),
                method=spec.method,
                max_llm_calls=spec.max_llm_calls,
                max_nodes=spec.max_nodes,
                max_depth=spec.max_depth,
                max_seconds=spec.max_seconds,
                execution_tools=spec.execution_tools,
                ambiguity_detection=spec.ambiguity_detection,
                candidates=spec.candidates,
                temperature=(DEFAULT_TEMPERATURE if spec.temperature is None else spec.temperature),
                on_event=listener,
            )
        finally:
            executor.close()

    return work
