"""Run a function on a thread of its own with a large stack.

prqlc recurses on the stack of whatever thread calls it, so how deep a text it
survives depends on that thread: 186 nested brackets crashed it on a 2 MiB
thread stack, 760 on 8 MiB (the Linux default), 6,080 on 64 MiB. A compile runs
on a fresh thread with `STACK_BYTES` of stack (reserved address space; only the
pages it touches are used), so `limits.MAX_NESTING` and `limits.MAX_DEPTH` keep
a margin of about 25 times whichever thread asked: a service worker, a Ray task,
the main thread. Starting the thread costs about 0.1 ms per compile.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

STACK_BYTES = 64 << 20
"""The compile thread's stack: 64 MiB."""

_SIZE_LOCK = threading.Lock()
"""`threading.stack_size` is process-wide: one compile thread is started at a time."""


def on_large_stack(function: Callable[[], T]) -> T:
    """`function()` run on a new thread with a `STACK_BYTES` stack; its result, or what
    it raised (any BaseException, e.g. prqlc's PanicException), raised here."""
    outcome: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(function())
        except BaseException as exc:  # handed to the caller's thread
            failure.append(exc)

    with _SIZE_LOCK:
        before = threading.stack_size(STACK_BYTES)
        try:
            thread = threading.Thread(target=run, name="prqlc", daemon=True)
            thread.start()
        finally:
            threading.stack_size(before)
    thread.join()
    if failure:
        raise failure[0]
    return outcome[0]
