"""Schema-constrained decoding (PICARD-style): SQL may only name what the schema has.

A request that carries ``sql_names`` (:class:`~acts_sql.llm.base.SqlNames`) is
decoded with a :class:`NameGuard`: while the reply writes SQL (inside a
```` ```sql```` block of a text reply, or inside the JSON string fields
``sql_names.json_fields`` of a JSON reply, escapes resolved), a token is
refused when an identifier it builds or completes cannot become one of the
names (:class:`~acts_sql.llm.local.sqlnames.NameRules`). Everything outside
those regions, and every token the rules are unsure of, is allowed.

The choosers check the token the unconstrained chooser would take first and
look further only when the guard refuses it (what
:class:`~acts_sql.llm.local.grammar.GrammarCheck` does for grammars): the next
best token that both the grammar and the guard allow, if the model finds it
likely enough (`MAX_GAP`) (:class:`ConstrainedGreedy`), or a draw among the
allowed tokens of the same truncated distribution (:class:`ConstrainedSample`);
with no such token the refused one is written. When nothing is refused
the reply is the unconstrained one, token for token; a drafted token the guard
refuses is not the greedy choice, so prompt lookup's accepted prefix ends
there.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from acts_sql.llm.local.sampling import SampleChooser, truncate
from acts_sql.llm.local.sqlnames import NameRules

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

TOP_CANDIDATES = 64
"""Tokens looked at, best first, for one allowed by the grammar and the guard; if none
is, the grammar's best is taken (the guard never leaves a reply without a token)."""
MAX_GAP = 4.6
"""A refused greedy token is replaced only by an allowed one the model finds at least about
1/100 as likely (a logit at most this much lower; e^4.6 = 100). With none, the refused token
stays and the database names the error: forcing a token the model does not want grew a word
into nothing valid (`sign_amountSUM(`, docs/BENCHMARKS.md). Samples likewise redraw only
within their own truncated distribution."""

_FENCE = re.compile(r"```[ \t]*sql[^\n`]*\n", re.IGNORECASE)
_TRAILING_TICKS = re.compile(r"(?:^|\n)[ \t]*(`{1,2})\Z")


def fenced_sql(text: str) -> tuple[int, int, bool] | None:
    """``(start, end, closed)`` of the last ```` ```sql```` block's SQL in `text`, None when
    none has opened. An open block's trailing ````` or ```````` on a line of its own is the
    closing fence being written, not SQL."""
    found = _last(_FENCE.finditer(text))
    if found is None:
        return None
    start = found.end()
    close = text.find("```", start)
    if close >= 0:
        return start, close, True
    ticks = _TRAILING_TICKS.search(text, start)
    return start, len(text) - (len(ticks.group(1)) if ticks else 0), False


def json_sql(text: str, fields: Sequence[str]) -> tuple[int, str, int, bool] | None:
    """``(raw_start, sql, raw_end, closed)`` of the last JSON string value of one of
    `fields` in `text`: where its raw text starts, its content with escapes resolved (an
    escape still being written left out), where the raw text ends (the closing quote, or
    the end), and whether it closed."""
    if not fields:
        return None
    keys = "|".join(re.escape(f) for f in fields)
    found = _last(re.finditer(r'"(?:' + keys + r')"\s*:\s*"', text))
    if found is None:
        return None
    start = found.end()
    sql, end, closed = unescape_json(text, start)
    return start, sql, end, closed


def _last(matches: Iterator[re.Match[str]]) -> re.Match[str] | None:
    last = None
    for last in matches:  # noqa: B007 (the last one is wanted)
        pass
    return last


_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def unescape_json(text: str, start: int) -> tuple[str, int, bool]:
    """A JSON string's content from `start`: ``(content, end, closed)``."""
    out: list[str] = []
    at = start
    while at < len(text):
        char = text[at]
        if char == '"':
            return "".join(out), at, True
        if char != "\\":
            out.append(char)
            at += 1
            continue
        if at + 1 >= len(text):
            break
        code = text[at + 1]
        if code == "u":
            digits = text[at + 2 : at + 6]
            if len(digits) < 4:
                break
            try:
                out.append(chr(int(digits, 16)))
            except ValueError:
                out.append(digits)
            at += 6
            continue
        out.append(_ESCAPES.get(code, code))
        at += 2
    return "".join(out), at, False


class NameGuard:
    """The reply written so far, and whether a token may come next (see the module doc).

    `json_fields` None: SQL is in ```sql blocks; else in those JSON string fields.
    """

    def __init__(
        self,
        rules: NameRules,
        piece: Callable[[int], bytes],
        json_fields: Sequence[str] | None = None,
    ) -> None:
        self.rules = rules
        self.piece = piece
        self.json_fields = json_fields
        self.text = b""
        self.refused = 0
        """Positions where the guard refused the token the unconstrained chooser took and
        another was written."""
        self.let_through = 0
        """Positions where it refused it but no allowed token was likely enough (`MAX_GAP`):
        the refused token was written."""

    def accept(self, token: int) -> None:
        self.text += self.piece(token)

    def allows(self, token: int) -> bool:
        """Whether `token` may be written next."""
        before = self.text.decode("utf-8", errors="ignore")
        after = (self.text + self.piece(token)).decode("utf-8", errors="ignore")
        return self.allows_text(before, after)

    def allows_text(self, before: str, after: str) -> bool:
        """Whether the reply may grow from `before` to `after`."""
        if self.json_fields is None:
            span = fenced_sql(after)
            if span is None:
                return True
            start, end, closed = span
            if closed and end < len(before):
                return True
            boundary = max(0, min(len(before), end) - start)
            return self.rules.allows(after[start:end], boundary, closed)
        found = json_sql(after, self.json_fields)
        if found is None:
            return True
        start, sql, end, closed = found
        if closed and end < len(before):
            return True
        boundary = len(unescape_json(before, start)[0]) if len(before) > start else 0
        return self.rules.allows(sql, boundary, closed)


class Inner(Protocol):
    """The chooser a guard constrains: a grammar's checks, or none."""

    def allows(self, token: int, logit: float) -> bool: ...

    def accept(self, token: int) -> None: ...


def ranked(row: npt.NDArray[Any], count: int = TOP_CANDIDATES) -> list[int]:
    """The `count` best tokens of `row`, best first (ties: the lower id first, as argmax)."""
    import numpy as np

    size = row.shape[0]
    count = min(count, size)
    ids = np.argpartition(-row, count - 1)[:count] if count < size else np.arange(size)
    order = np.lexsort((ids, -row[ids]))
    return [int(ids[i]) for i in order if np.isfinite(row[ids[i]])]


class ConstrainedGreedy:
    """The greedy token (under the inner chooser's grammar) that the guard allows."""

    def __init__(self, inner: Any, guard: NameGuard) -> None:
        self.inner = inner
        self.guard = guard

    def choose(self, logits: npt.NDArray[np.float32], best: int | None = None) -> int:
        import numpy as np

        token = int(np.argmax(logits)) if best is None else best
        if self.inner.allows(token, float(logits[token])):
            row = logits
        else:
            row = self.inner.masked(logits)
            token = int(np.argmax(row))
        if not self.guard.allows(token):
            alternative = self._best_allowed(row, float(row[token]))
            if alternative is None:
                self.guard.let_through += 1
            else:
                self.guard.refused += 1
                token = alternative
        self.accept(token)
        return token

    def _best_allowed(self, row: npt.NDArray[Any], refused_logit: float) -> int | None:
        """The best token both allow, within `MAX_GAP` of the refused one; None if none."""
        for candidate in ranked(row):
            logit = float(row[candidate])
            if logit < refused_logit - MAX_GAP:
                return None
            if self.inner.allows(candidate, logit) and self.guard.allows(candidate):
                return candidate
        return None

    def accept(self, token: int) -> None:
        self.inner.accept(token)
        self.guard.accept(token)

    def allows(self, token: int, logit: float) -> bool:
        return bool(self.inner.allows(token, logit)) and self.guard.allows(token)


class ConstrainedSample:
    """A :class:`SampleChooser` whose draws the guard checks; a refused draw is drawn again
    among the allowed tokens of the same truncated distribution."""

    def __init__(self, inner: SampleChooser, guard: NameGuard) -> None:
        self.inner = inner
        self.guard = guard

    def choose(self, logits: npt.NDArray[np.float32], best: int | None = None) -> int:
        inner = self.inner
        token = inner.draw(logits)
        row = logits
        grammar = inner.grammar
        if grammar is not None and not grammar.allows(token, float(logits[token])):
            inner.rejected += 1
            row = grammar.masked(logits)
            token = inner.draw(row)
        if not self.guard.allows(token):
            redrawn = self._redraw(row)
            if redrawn is None:
                self.guard.let_through += 1
            else:
                self.guard.refused += 1
                token = redrawn
        self.accept(token)
        return token

    def _redraw(self, row: npt.NDArray[Any]) -> int | None:
        """A draw among the allowed tokens of the truncated distribution; None if it holds
        none (the refused draw then stays, see `MAX_GAP`)."""
        inner = self.inner
        ids, probs = truncate(row, inner.temperature, inner.chain)
        kept = [i for i, t in enumerate(ids) if self.allows(int(t), float(row[t]))]
        if not kept:
            return None
        return inner.draw_among(ids[kept], probs[kept] / probs[kept].sum())

    def accept(self, token: int) -> None:
        self.inner.accept(token)
        self.guard.accept(token)

    def allows(self, token: int, logit: float) -> bool:
        return self.inner.allows(token, logit) and self.guard.allows(token)
