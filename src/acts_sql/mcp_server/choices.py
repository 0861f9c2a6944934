"""A `fix_sql` run that may stop to ask for a reading (`acts-sql mcp --ask`).

The correction runs in a worker thread with a `ChoiceSlot` as its asker
(`acts_sql.engine.choice`): the question is published and the run waits for
`choose_reading`, at most the seconds left of its wall-time budget; with no answer by then
the engine's own choice stands and the run ends by itself. `fix_sql` returns as soon as the
run either ends or asks.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from acts_sql.engine.choice import ChoiceAsker, ChoiceQuestion, ChoiceSlot
from acts_sql.engine.result import CorrectionResult

Start = Callable[[ChoiceAsker], CorrectionResult]


class WaitingRun:
    """One correction in a worker thread; `on_done` is called when it ends, however."""

    def __init__(self, start: Start, on_done: Callable[[], None]) -> None:
        self.slot = ChoiceSlot()
        self._ended = threading.Event()
        self._result: CorrectionResult | None = None
        self._error: BaseException | None = None
        self._on_done = on_done
        threading.Thread(target=self._work, args=(start,), daemon=True).start()

    def _work(self, start: Start) -> None:
        try:
            self._result = start(self.slot)
        except BaseException as exc:  # handed to the caller of `result`
            self._error = exc
        finally:
            self._ended.set()
            self.slot.wake()
            self._on_done()

    def wait(self) -> ChoiceQuestion | None:
        """Until the run ends or asks: the question it asks, or None once it ended."""
        asked = self.slot.wait_asked(self._ended.is_set)
        return self.slot.question if asked else None

    def answer(self, reading: str) -> CorrectionResult:
        """Give the run its answer (if it still waits) and wait for its end."""
        self.slot.answer(reading)
        return self.result()

    def result(self) -> CorrectionResult:
        """The run's result once it ended (its error raised)."""
        self._ended.wait()
        if self._error is not None:
            raise self._error
        if self._result is None:
            raise RuntimeError("the run ended without a result")
        return self._result
