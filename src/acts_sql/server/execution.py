"""One run's work: open the configured database, correct, close."""

from __future__ import annotations

from collections.abc import Callable

from acts_sql.api import correct
from acts_sql.engine.choice import ChoiceAsker
from acts_sql.engine.events import TraceEvent
from acts_sql.engine.result import CorrectionResult
from acts_sql.server.catalog import BackendFactory, DatabaseCatalog
from acts_sql.server.runs import RunSpec, Work


def make_work(catalog: DatabaseCatalog, backends: BackendFactory) -> Work:
    """The registry's work function for this catalog and LLM backend."""

    def work(
        spec: RunSpec, listener: Callable[[TraceEvent], None], asker: ChoiceAsker | None
    ) -> CorrectionResult:
        executor = catalog.open(spec.database)
        try:
            return correct(
                executor,
                spec.question,
                spec.sql,
                llm=backends(),
                options=spec.options,
                on_event=listener,
                dialect=spec.dialect,
                language=spec.language,
                asker=asker,
            )
        finally:
            executor.close()

    return work
