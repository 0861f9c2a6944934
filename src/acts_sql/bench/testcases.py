"""Running one official test case: the source is ``exec``'d with the helpers as its globals.

As in the official evaluator the source runs with *separate* globals (the
dialect's helper functions, ``pred_query_result``, ``date``) and locals
(``conn``, ``pred_sqls``, ``sol_sqls``, ``db_name`` or ``db_path`` and
``kwargs``): names the test defines at top level land in the locals, which
its functions cannot see, and that is part of the contract. Anything the test
prints is swallowed. A test passes when it returns without raising; an
AssertionError or any other exception fails it. A time limit (SIGALRM, in
the subprocess's main thread) stops a test that hangs.
"""

from __future__ import annotations

import contextlib
import io
import signal
import threading
from collections.abc import Iterator
from typing import Any

from acts_sql.bench.helpers import HelperSet
from acts_sql.bench.jobs import CaseOutcome

_MESSAGE_CHARS = 500


class CaseTimeoutError(BaseException):
    """A test case ran past its time limit (a BaseException, so `except Exception` in tests
    cannot swallow it)."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise CaseTimeoutError in this thread after ``seconds`` (main thread only; else no limit)."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_alarm(signum: int, frame: Any) -> None:
        raise CaseTimeoutError(f"test case ran longer than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def case_locals(
    helpers: HelperSet,
    conn: Any,
    pred_sqls: list[str],
    sol_sqls: list[str],
    conditions: dict[str, Any],
) -> dict[str, Any]:
    """The locals a test case sees, named as in the official evaluator of that dialect."""
    if helpers.dialect == "SQLite":
        return {
            "conn": conn,
            "pred_sqls": pred_sqls,
            "sol_sqls": sol_sqls,
            "db_path": helpers.db_name,
            "kwargs": {"conditions": conditions},
        }
    return {"conn": conn, "pred_sqls": pred_sqls, "sol_sqls": sol_sqls, "db_name": helpers.db_name}


def run_test_case(
    index: int,
    source: str,
    helpers: HelperSet,
    conn: Any,
    *,
    pred_query_result: Any,
    pred_sqls: list[str],
    sol_sqls: list[str],
    conditions: dict[str, Any],
    timeout_s: float,
) -> CaseOutcome:
    """Run one test case's source and say whether it passed, and why not."""
    code = helpers.test_prefix + source + helpers.test_call
    global_env = helpers.test_globals(pred_query_result)
    local_env = case_locals(helpers, conn, list(pred_sqls), list(sol_sqls), conditions)
    try:
        with contextlib.redirect_stdout(io.StringIO()), time_limit(timeout_s):
            exec(code, global_env, local_env)
    except CaseTimeoutError as exc:
        return CaseOutcome(index=index, passed=False, message=str(exc), timed_out=True)
    except AssertionError as exc:
        return CaseOutcome(index=index, passed=False, message=_describe("assertion", exc))
    except Exception as exc:
        return CaseOutcome(index=index, passed=False, message=_describe("error", exc))
    return CaseOutcome(index=index, passed=True)


def _describe(kind: str, exc: BaseException) -> str:
    text = str(exc).strip()
    text = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    if kind == "assertion" and isinstance(exc, AssertionError):
        text = f"assertion failed: {str(exc).strip() or '(no message)'}"
    return text[:_MESSAGE_CHARS]
