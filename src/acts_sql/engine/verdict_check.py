"""Is a judge's rejection backed by the rows? The claims of its reason, checked.

A small model's "reject" is weak evidence: the 0.5B rejected the right answer
to "List the names of all users." twice, with reasons that named nothing it
could see. A rejection may discard a result group most candidates agree on
only when its reason is specific and true of the rows (`candidate_stage`):

- a **value** the result does or does not hold: a quoted string or a number
  right after a verb of having ("does not list 'carol'", "is missing 'carol'",
  "includes 'ann'", "should include 'carol'": the result lacks it, "should not
  return 'ann'": it holds it);
- a **row count**: "returns 3 rows", "returns no rows", "the result is empty",
  "should return 2 rows" (the result has another count).

Each claim is checked against the rows the engine already holds (the
candidate's `ResultShape`: every row up to the row cap; no query is run). A
value is found when a cell equals it (case and surrounding blanks aside;
numbers by value); a value that names a column of the result is no claim
about its rows. When the row cap cut the result, absence and counts cannot be
checked and only presence claims count. The rejection is backed (`check_rejection`
returns the claim) when at least one claim can be checked and every claim
that can be checked holds; otherwise it returns None. The test is lexical and
narrow on purpose: a reason that only says the candidate is wrong is not
evidence about the rows.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

from acts_sql.db.result import ExecResult
from acts_sql.engine.fingerprint import ResultShape

_HAVE = r"(list|include|contain|return|show|have|give|produce|output|display)"
_HAVES = r"(lists|includes|contains|returns|shows|has|gives|produces|outputs|displays)"
_VALUE = (
    r"(?:'(?P<sq>[^'\n]{1,80})'|\"(?P<dq>[^\"\n]{1,80})\""
    r"|(?<![\w.])(?P<num>-?\d+(?:\.\d+)?)(?![\w.%]|\s*(?:rows?|records?|results?|columns?|times?)\b))"
)
_GAP = r"(?:\s+(?!(?:and|but|or|which|that|while)\b)[\w-]+){0,4}?\s+"
_NEGATED = (
    r"(?:does\s*n[o']t|do\s*n[o']t|did\s*n[o']t|fails?\s+to|never)\s+"
    + _HAVE
    + r"|(?:is\s+|are\s+)?missing|lacks?|lacking|omits?|omitting|excludes?|excluding"
    r"|leaves?\s+out|without"
)
_EXPECTED = (
    r"(?:should|must|needs?\s+to|ought\s+to|(?:is|are)\s+expected\s+to)\s+(?P<neg>not\s+)?" + _HAVE
)
_PRESENT = r"(?:still\s+|also\s+)?" + _HAVES

_VALUE_CLAIMS = [
    ("expected", re.compile(r"\b" + _EXPECTED + _GAP + _VALUE, re.IGNORECASE)),
    ("absent", re.compile(r"\b(?:" + _NEGATED + ")" + _GAP + _VALUE, re.IGNORECASE)),
    ("present", re.compile(r"\b" + _PRESENT + _GAP + _VALUE, re.IGNORECASE)),
]

_NUMBER_WORDS = {
    "no": 0, "zero": 0, "one": 1, "a single": 1, "two": 2, "three": 3, "four": 4, "five": 5,
    "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
}  # fmt: skip
_COUNT = r"(?P<n>\d+|no|zero|one|a\s+single|two|three|four|five|six|seven|eight|nine|ten)"
_ROWS = r"\s+(?:rows?|records?|results?|lines?)\b"
_COUNT_CLAIMS = [
    (
        "expected",
        re.compile(
            r"\b(?:should|must|needs?\s+to|is\s+expected\s+to)\s+(?:return|have|give|list|show)"
            r"\s+(?:only\s+|just\s+|exactly\s+)?" + _COUNT + _ROWS,
            re.IGNORECASE,
        ),
    ),
    (
        "actual",
        re.compile(
            r"\b" + _HAVES + r"\s+(?:only\s+|just\s+|exactly\s+)?" + _COUNT + _ROWS, re.IGNORECASE
        ),
    ),
    (
        "empty",
        re.compile(
            r"\b(?:(?:result|output)\s+is\s+empty|empty\s+result|returns?\s+nothing"
            r"|(?:does\s*n[o']t|do\s*n[o']t|did\s*n[o']t)\s+return\s+any\s+(?:rows|results))\b",
            re.IGNORECASE,
        ),
    ),
]


@dataclass(frozen=True)
class Claim:
    """One statement of a reason about the rows: what it says, and whether it holds."""

    text: str
    holds: bool | None
    """None: the rows in hand cannot tell (the row cap cut them)."""


def check_rejection(reason: str, result: ExecResult, shape: ResultShape | None) -> str | None:
    """The claim of `reason` that the rows bear out, when they bear out every claim that
    can be checked; None when the reason says nothing checkable or something false."""
    if shape is None or not shape.has_rows:
        return None
    checked = [c for c in claims(reason, result, shape) if c.holds is not None]
    if not checked or not all(c.holds for c in checked):
        return None
    return checked[0].text


def claims(reason: str, result: ExecResult, shape: ResultShape) -> list[Claim]:
    """Every value and row-count claim of `reason`, checked against the rows (see the module
    doc); a span of the reason is read once (the first pattern that matches it)."""
    found: list[tuple[int, Claim]] = []
    taken: list[tuple[int, int]] = []
    for start, end, claim in _all_claims(reason, result, shape):
        if any(start < b and a < end for a, b in taken):
            continue
        taken.append((start, end))
        found.append((start, claim))
    return [claim for _, claim in sorted(found, key=lambda pair: pair[0])]


def _all_claims(
    reason: str, result: ExecResult, shape: ResultShape
) -> Iterator[tuple[int, int, Claim]]:
    cells = _cells(shape)
    columns = {c.strip().casefold() for c in result.columns}
    for kind, pattern in _VALUE_CLAIMS:
        for match in pattern.finditer(reason):
            value = next(v for v in (match["sq"], match["dq"], match["num"]) if v is not None)
            if value.strip().casefold() in columns:
                continue
            present = _held(value, cells)
            says_present = (
                bool(match.groupdict().get("neg")) if kind == "expected" else (kind == "present")
            )
            holds = present == says_present if present or not shape.truncated else None
            yield match.start(), match.end(), Claim(match[0], holds)
    rows = len(shape.row_keys)
    for kind, pattern in _COUNT_CLAIMS:
        for match in pattern.finditer(reason):
            n = 0 if kind == "empty" else _count(match["n"])
            said = rows == n if kind != "expected" else rows != n
            yield match.start(), match.end(), Claim(match[0], None if shape.truncated else said)


def _count(word: str) -> int:
    word = " ".join(word.lower().split())
    return int(word) if word.isdigit() else _NUMBER_WORDS[word]


def _cells(shape: ResultShape) -> set[str]:
    """Every cell of the rows in hand, as comparable text."""
    cells: set[str] = set()
    for key in shape.row_keys:
        for cell in json.loads(key):
            cells.add(_text(cell))
    return cells


def _text(value: object) -> str:
    if isinstance(value, float) and value == int(value):
        value = int(value)
    return str(value).strip().casefold()


def _held(value: str, cells: set[str]) -> bool:
    text = value.strip().casefold()
    if text in cells:
        return True
    try:
        number = float(text)
    except ValueError:
        return False
    return _text(number) in cells
