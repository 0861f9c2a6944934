"""Python sources read as syntax trees, one thread at a time.

CPython 3.11 keeps the depth counter of its syntax-tree constructor in
interpreter-wide state. When two threads build trees at once (a scorer
worker reading a test case while another does the same) and the interpreter
switches between them mid-build (a finalizer or a collection runs Python
code), the counter no longer matches and ``ast.parse`` raises
``SystemError: AST constructor recursion depth mismatch`` on a valid source.
Every tree the harness builds goes through :func:`parse` and
:func:`literal`, which hold one lock; a thread outside the harness can still
interleave, so that spurious error is tried once more before it is raised.
"""

from __future__ import annotations

import ast
import threading
from collections.abc import Callable
from typing import Any, TypeVar

_LOCK = threading.Lock()
_MISMATCH = "recursion depth mismatch"
_T = TypeVar("_T")


def parse(source: str) -> ast.Module:
    """``ast.parse(source)``; raises ``SyntaxError`` or ``ValueError`` as it does."""
    return _serialized(ast.parse, source)


def literal(text: str) -> Any:
    """``ast.literal_eval(text)``; raises what it raises on text that is no literal."""
    return _serialized(ast.literal_eval, text)


def _serialized(build: Callable[[str], _T], text: str) -> _T:
    with _LOCK:
        try:
            return build(text)
        except SystemError as error:
            if _MISMATCH not in str(error):
                raise
            return build(text)
