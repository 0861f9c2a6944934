"""A `fix_sql` run that may stop to ask for a reading (`acts-sql mcp --ask`).

The correction runs in a worker thread with an asker (`acts_sql.engine.choice`) that
publishes the question and waits for `choose_reading`, at most the seconds left of the run's
wall-time budget; with no answer by then the engine's own choice stands and the run ends
by itself. `fix_sql` returns as soon as the run either ends or asks.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from acts_sql.engine.choice import ChoiceAsker, ChoiceQuestion
from acts_sql.engine.result import CorrectionResult

Start = Callable[[ChoiceAsker], CorrectionResult]


class WaitingRun:
    """One correction in a worker thread; `on_done` is called when it ends, however."""

    def __init__(self, start: Start, on_done: Callable[[], None]) -> None:
        self._changed = threading.Condition()
        self.question: ChoiceQuestion | None = None
        self._answer: str | None = None
        self._answered = False
        self._result: CorrectionResult | None = None
        self._error: BaseException | None = None
        self._on_done = on_done
        threading.Thread(target=self._work, args=(start,), daemon=True).start()

    def _work(self, start: Start) -> None:
        try:
            result = start(self._ask)
        except BaseException as exc:  # handed to the caller of `result`
            with self._changed:
                self._error = exc
                self._changed.notify_all()
        else:
            with self._changed:
                self._result = result
                self._changed.notify_all()
        finally:
            self._on_done()

    def _ask(self, question: ChoiceQuestion, timeout: float) -> str | None:
        with self._changed:
            self.question = question
            self._changed.notify_all()
            self._changed.wait_for(lambda: self._answered, timeout=timeout)
            self.question = None
            return self._answer if self._answered else None

    @property
    def ended(self) -> bool:
        return self._result is not None or self._error is not None

    def wait(self) -> ChoiceQuestion | None:
        """Until the run ends or asks: the question it asks, or None once it ended."""
        with self._changed:
            self._changed.wait_for(lambda: self.ended or self.question is not None)
            return None if self.ended else self.question

    def answer(self, reading: str) -> CorrectionResult:
        """Give the run its answer and wait for its end."""
        with self._changed:
            self._answer, self._answered = reading, True
            self._changed.notify_all()
        return self.result()

    def result(self) -> CorrectionResult:
        """The run's result once it ended (its error raised)."""
        with self._changed:
            self._changed.wait_for(lambda: self.ended)
            if self._error is not None:
                raise self._error
            assert self._result is not None
            return self._result
