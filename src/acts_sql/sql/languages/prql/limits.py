"""The limits a PRQL text must keep before prqlc sees it.

prqlc 0.13 recurses on the call stack while it parses and resolves, and a
text that nests too deep makes it overflow the stack: the process dies with a
segfault (SIGSEGV, nothing to catch), whatever thread it runs on. Measured on
an 8 MiB stack (the Linux default, also that of Python's threads):

- brackets: 1,000 nested ``(`` after ``from customers | select {x = `` crash;
  ``(`` ``{`` ``[`` ``case [``, ``s"{`` and function calls ``f (`` crash from
  630-780 levels up;
- chains: ``1 + 1 + ... + 1`` (any binary operator), a pipeline of ``|``
  steps or of lines, crash from about 840 operators or steps, and depth adds
  up: a chain of 10 inside each level crashed at 85 levels;
- long dotted names: ``a.b.b...`` of 8,000 parts (16 KB) took 18 s and
  3.5 GB (quadratic), 1,000 parts 0.2 s.

So `check_limits` reads the text with a small lexer (strings, comments and
f/s-string interpolations understood) and refuses, with the line and column:

- a text longer than `MAX_CHARS`;
- brackets nested deeper than `MAX_NESTING`;
- an expression deeper than `MAX_DEPTH`, counted as prqlc builds it: each
  bracket level counts 1, plus its pipeline steps (``|`` or a new line, in
  ``( )`` or at the top) and its longest run of operators between commas;
- a dotted name of more than `MAX_NAME_PARTS` parts.

Each limit is a quarter or less of where prqlc fails; no query a person or a
model writes comes near them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from acts_sql.sql.diagnostics import SqlDiagnostic

MAX_CHARS = 65_536
"""Longest PRQL text compiled (characters)."""
MAX_NESTING = 128
"""Deepest bracket nesting: prqlc crashed from 630 levels up."""
MAX_DEPTH = 256
"""Deepest expression (levels + steps + operators, see the module doc): prqlc crashed
from about 630 up (840 for a flat chain)."""
MAX_NAME_PARTS = 64
"""Most parts of one dotted name (``schema.table.column`` has 3)."""

_TOKEN = re.compile(
    r"""(?P<comment>\#[^\n]*)
      | (?P<string>[rfs]?(?P<quote>"+|'+))
      | (?P<name>[A-Za-z_$][\w$]*(?:\.[A-Za-z_$*][\w$]*)*)
      | (?P<open>[(\[{])
      | (?P<close>[)\]}])
      | (?P<newline>\n)
      | (?P<comma>,)
      | (?P<pipe>\|(?!\|))
      | (?P<op>[-+*/%=!<>&|?~.]+)
      | (?P<other>[^\s])
      | (?P<space>[ \t\r]+)""",
    re.VERBOSE,
)


class LimitExceeded(Exception):
    """A PRQL text beyond a limit; `diagnostic` says which, where and by how much."""

    def __init__(self, diagnostic: SqlDiagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


@dataclass
class _Level:
    """One bracket level: where it opened, its steps and operator runs so far."""

    opener: str
    at: int
    steps: int = 0
    ops: int = 0
    max_ops: int = 0
    deepest_child: int = 0
    at_line_start: bool = field(default=False)

    def weight(self) -> int:
        return 1 + self.steps + max(self.ops, self.max_ops) + self.deepest_child


def check_limits(text: str) -> SqlDiagnostic | None:
    """The first limit `text` exceeds, as a diagnostic with line and column; None if none.
    (A text past `MAX_CHARS` is refused before the cache, which keeps only short texts.)"""
    if len(text) > MAX_CHARS:
        return _fail_size(text)
    return _check_cached(text)


@lru_cache(maxsize=256)
def _check_cached(text: str) -> SqlDiagnostic | None:
    try:
        _Scanner(text).scan()
    except LimitExceeded as exc:
        return exc.diagnostic
    return None


def _fail_size(text: str) -> SqlDiagnostic:
    try:
        _Scanner(text).scan()
    except LimitExceeded as exc:
        return exc.diagnostic
    raise AssertionError("a text past MAX_CHARS always fails the scan")  # pragma: no cover


class _Scanner:
    """Walks the tokens of a PRQL text once, keeping the stack of open brackets."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.stack: list[_Level] = [_Level("", 0)]
        self._at = 0
        """Where the token being read starts."""
        self._too_deep_at: int | None = None
        """Where the expression depth first passed `MAX_DEPTH` (the scan goes on, to say
        how deep the whole text is)."""

    def scan(self) -> None:
        if len(self.text) > MAX_CHARS:
            self._fail(
                MAX_CHARS,
                f"the PRQL text is {len(self.text):,} characters long; at most {MAX_CHARS:,} "
                "are compiled",
            )
        self._code(0, closing=None)
        while len(self.stack) > 1:  # unclosed brackets: prqlc reports them
            self._close(self.stack[-1].at)
        if self._too_deep_at is not None:
            depth = self.stack[0].weight() - 1
            self._fail(
                self._too_deep_at,
                f"an expression {depth} levels deep (brackets, pipeline steps and operators "
                f"in a row); at most {MAX_DEPTH}",
            )

    def _code(self, pos: int, closing: str | None) -> int:
        """Scan code from `pos` up to the `}` that ends an interpolation (`closing`) or
        the end; the position after it."""
        base = len(self.stack)
        while pos < len(self.text):
            match = _TOKEN.match(self.text, pos)
            if match is None:  # cannot happen: `other` matches any non-space
                return len(self.text)
            kind, start, pos = match.lastgroup, match.start(), match.end()
            if kind == "close" and closing is not None and len(self.stack) == base:
                return pos
            if kind == "string":
                pos = self._string(match, pos)
                self._operand()
            else:
                self._token(kind or "", match.group(0), start)
        return pos

    def _token(self, kind: str, value: str, start: int) -> None:
        self._at = start
        level = self.stack[-1]
        if kind == "open":
            self._operand()
            self.stack.append(_Level(value, start))
            if len(self.stack) - 1 > MAX_NESTING:
                self._fail(
                    start,
                    f"brackets nested {self._nesting_at(start)} deep; at most {MAX_NESTING}",
                )
        elif kind == "close" and len(self.stack) > 1:
            self._close(self.stack[-1].at)
        elif kind in ("pipe", "newline"):
            self._step(level, kind == "pipe")
        elif kind == "comma":
            level.max_ops, level.ops = max(level.max_ops, level.ops), 0
        elif kind == "op":
            level.ops += 1
            self._check_depth(level, start)
        elif kind == "name":
            self._name(value, start)
        if kind not in ("newline", "space", "comment"):
            level.at_line_start = False

    def _step(self, level: _Level, pipe: bool) -> None:
        """A `|`, or a new line, which starts a pipeline step in `( )` or at the top."""
        if level.opener not in ("", "(") or (not pipe and level.at_line_start):
            return
        level.at_line_start = not pipe
        level.steps += 1
        level.max_ops, level.ops = max(level.max_ops, level.ops), 0
        self._check_depth(level, self._at)

    def _operand(self) -> None:
        self.stack[-1].at_line_start = False

    def _name(self, value: str, start: int) -> None:
        parts = value.count(".") + 1
        if parts > MAX_NAME_PARTS:
            self._fail(start, f"a name of {parts} dotted parts; at most {MAX_NAME_PARTS}")
        self._operand()

    def _close(self, at: int) -> None:
        """Close the innermost level (whose bracket opened at `at`); its weight goes up."""
        level = self.stack.pop()
        parent = self.stack[-1]
        parent.deepest_child = max(parent.deepest_child, level.weight())
        self._check_depth(parent, at)

    def _check_depth(self, level: _Level, at: int) -> None:
        """Note `at` if `level` is now past the limit: each level's weight only grows and
        the top level's is the text's depth, so this finds the first such place."""
        depth = level.weight() - (1 if level is self.stack[0] else 0)
        if depth > MAX_DEPTH and self._too_deep_at is None:
            self._too_deep_at = at

    def _nesting_at(self, start: int) -> int:
        """How deep the brackets at `start` nest in the whole text (for the message)."""
        depth, deepest = len(self.stack) - 1, len(self.stack) - 1
        for char in self.text[start + 1 :]:
            if char in "([{":
                depth += 1
                deepest = max(deepest, depth)
            elif char in ")]}":
                depth -= 1
                if depth < len(self.stack) - 1:
                    break
        return deepest

    def _string(self, match: re.Match[str], pos: int) -> int:
        """Skip a string literal; an f/s-string's ``{...}`` interpolations are code."""
        quote = match.group("quote")
        if len(quote) == 2:  # "" is an empty string
            return pos
        prefix = match.group("string")[: -len(quote)]
        while pos < len(self.text):
            if self.text.startswith(quote, pos):
                return pos + len(quote)
            char = self.text[pos]
            if char == "\\" and prefix != "r":
                pos += 2
            elif char == "{" and prefix in ("f", "s"):
                if self.text.startswith("{{", pos):
                    pos += 2
                else:
                    self._token("open", "{", pos)
                    pos = self._code(pos + 1, closing="}")
                    if len(self.stack) > 1:
                        self._close(self.stack[-1].at)
            else:
                pos += 1
        return pos

    def _fail(self, at: int, message: str) -> None:
        line = self.text.count("\n", 0, at) + 1
        column = at - (self.text.rfind("\n", 0, at) + 1) + 1
        raise LimitExceeded(
            SqlDiagnostic(
                message=message,
                line=line,
                column=column,
                near=self.text[at : at + 20].split("\n", 1)[0],
            )
        )
