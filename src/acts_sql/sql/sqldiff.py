"""A compact token-level diff of two SQL texts, for an LLM judge or a person.

    >>> token_diff("SELECT a FROM t WHERE x = 1", "SELECT a FROM t WHERE x > 1", "sqlite")
    '- WHERE x = 1 + WHERE x > 1'

Both texts are cut into tokens by sqlglot's tokenizer for the dialect (so
whitespace, line breaks and comments do not count as changes, and neither
does the case of keywords or of unquoted names); text the tokenizer rejects
is split on whitespace instead. Each change is shown as one hunk, `- <before>
+ <after>`, with `context` tokens on either side, hunks joined by ` … `, and
the whole clipped to `max_chars` (hunks that do not fit are counted, as
`(+N more)`; one too long is cut in the middle). Tokens are shown as
written, with the spacing between them reduced to one space (or none, as in
`f(x)`). Very long, very different texts are shown as one hunk between their
common prefix and suffix, because difflib's matching is quadratic.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from sqlglot import TokenType
from sqlglot.errors import SqlglotError

from acts_sql.sql.dialects import Dialect, get_dialect
from acts_sql.sql.languages.registry import plugin_for

NO_CHANGE = "(no change)"
ELLIPSIS = "…"

_FOLDED = frozenset({TokenType.VAR})
"""Token types compared case-insensitively besides keywords (unquoted names)."""
_EXACT_SUFFIXES = ("STRING",)
_EXACT = frozenset({TokenType.IDENTIFIER, TokenType.NUMBER})
"""Token types compared exactly: quoted names, numbers and every kind of string."""


_SMALL_WORK = 10_000
_MAX_WORK = 250_000
_ALIKE = 0.6
"""difflib is quadratic: above `_MAX_WORK` (the product of the token counts),
or above `_SMALL_WORK` for texts less than `_ALIKE` alike, the changes are
shown as one hunk between the common prefix and suffix."""

_Opcode = tuple[str, int, int, int, int]


@dataclass(frozen=True)
class _Tok:
    """One token: how it is compared, how it is shown, and whether a space precedes it."""

    key: str
    text: str
    spaced: bool


def token_diff(
    before: str,
    after: str,
    dialect: str | Dialect,
    max_chars: int = 400,
    *,
    context: int = 2,
) -> str:
    """The changes from `before` to `after`, as `- old + new` hunks (see the module doc).

    `(no change)` when the token sequences are equal; never longer than `max_chars`.
    """
    if plugin_for(dialect) is not None:  # a query language sqlglot cannot tokenize: words
        old, new = _words(before), _words(after)
    else:
        d = get_dialect(dialect)
        old, new = _tokens(before, d), _tokens(after, d)
    hunks = [
        _hunk(old, new, group, max_chars)
        for group in _groups([t.key for t in old], [t.key for t in new], max(0, context))
        if any(tag != "equal" for tag, *_ in group)
    ]
    if not hunks:
        return NO_CHANGE
    return _clip_hunks(hunks, max_chars)


def _groups(a: list[str], b: list[str], context: int) -> list[list[_Opcode]]:
    """difflib's grouped opcodes; for very long texts, one hunk between the
    common prefix and suffix (difflib is quadratic)."""
    matcher = difflib.SequenceMatcher(None, a, b, False)
    work = len(a) * len(b)
    if work <= _SMALL_WORK or (work <= _MAX_WORK and matcher.quick_ratio() >= _ALIKE):
        return list(matcher.get_grouped_opcodes(context))
    prefix = 0
    while prefix < min(len(a), len(b)) and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(a), len(b)) - prefix and a[-1 - suffix] == b[-1 - suffix]:
        suffix += 1
    if prefix == len(a) == len(b):
        return []
    start, a_end, b_end = max(0, prefix - context), len(a) - suffix, len(b) - suffix
    a_stop, b_stop = min(len(a), a_end + context), min(len(b), b_end + context)
    return [
        [
            ("equal", start, prefix, start, prefix),
            ("replace", prefix, a_end, prefix, b_end),
            ("equal", a_end, a_stop, b_end, b_stop),
        ]
    ]


def _tokens(sql: str, d: Dialect) -> list[_Tok]:
    """`sql` as comparable tokens: sqlglot's, or whitespace-separated words."""
    try:
        raw = d.sqlglot_dialect.tokenize(sql)
    except SqlglotError:
        return _words(sql)
    tokens: list[_Tok] = []
    previous_end: int | None = None
    for token in raw:
        text = sql[token.start : token.end + 1]
        spaced = previous_end is not None and token.start > previous_end + 1
        tokens.append(_Tok(_key(token.token_type, text), text, spaced))
        previous_end = token.end
    return tokens


def _words(text: str) -> list[_Tok]:
    return [_Tok(word.upper(), word, True) for word in text.split()]


def _key(kind: TokenType, text: str) -> str:
    """What two tokens must share to count as equal."""
    if kind in _EXACT or kind.name.endswith(_EXACT_SUFFIXES):
        return f"{kind.name}:{text}"
    if kind in _FOLDED:
        return f"name:{text.lower()}"
    return text.upper()


def _hunk(old: list[_Tok], new: list[_Tok], group: list[_Opcode], max_chars: int) -> str:
    """One group of opcodes (with context) as `- before + after`."""
    old_part = _join(old[group[0][1] : group[-1][2]])
    new_part = _join(new[group[0][3] : group[-1][4]])
    side = max(8, (max_chars - 6) // 2)
    return f"- {_shorten(old_part, side)} + {_shorten(new_part, side)}"


def _join(tokens: list[_Tok]) -> str:
    """Tokens as text, one space where the original had any whitespace."""
    if not tokens:
        return "(nothing)"
    parts = [tokens[0].text]
    for token in tokens[1:]:
        parts.append(f" {token.text}" if token.spaced else token.text)
    return "".join(parts)


def _shorten(text: str, limit: int) -> str:
    """`text` cut in the middle to at most `limit` characters."""
    if len(text) <= limit:
        return text
    head = (limit - 1) // 2
    tail = limit - 1 - head
    return text[:head] + ELLIPSIS + (text[-tail:] if tail else "")


def _clip_hunks(hunks: list[str], max_chars: int) -> str:
    """Hunks joined by ` … `; those that do not fit `max_chars` are counted, not shown."""
    separator = f" {ELLIPSIS} "
    reserve = len(f"{separator}(+{len(hunks)} more)")
    shown: list[str] = []
    for index, hunk in enumerate(hunks):
        needed = 0 if index == len(hunks) - 1 else reserve
        if len(separator.join([*shown, hunk])) + needed > max_chars:
            break
        shown.append(hunk)
    if not shown:  # even the first hunk is too long: cut it
        room = max_chars - reserve if len(hunks) > 1 and max_chars > 2 * reserve else max_chars
        shown = [_shorten(hunks[0], max(1, room))]
    text = separator.join(shown)
    hidden = len(hunks) - len(shown)
    note = f"{separator}(+{hidden} more)" if hidden else ""
    return text + note if len(text) + len(note) <= max_chars else _shorten(text, max_chars)
