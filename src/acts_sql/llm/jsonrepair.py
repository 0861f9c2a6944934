"""Take the JSON object out of an LLM reply, repairing common damage.

LLM replies wrap JSON in prose and code fences, and damage it: trailing
commas, single quotes, Python literals, bare keys, unescaped quotes inside
strings, and output cut off mid-way. :func:`extract_json` tries, in order:

1. the whole reply, then each fenced block, as strict JSON;
2. each ``{`` in the fenced blocks, then in the whole reply: strict JSON with
   text around it, else the `json_repair` package's parser. An object that
   cannot be read is skipped whole (the objects nested in it are not
   candidates), so a broken reply is reported, not half-read.

Strict means :mod:`json` with raw control characters (such as newlines in a
multi-line SQL string) allowed inside strings. The package repairs nearly
anything; this module keeps the policy: it names each repair, drops a member
whose value was cut off, and refuses what is not unambiguous enough (a bare
word as a value, a key without ``:``, an object cut off before its first
member, a repair of a kind not listed here). A refusal raises
:class:`JsonExtractionError` with a reason, which a caller can feed back to
the model.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from json_repair.json_parser import JSONParser
from json_repair.utils.json_context import ContextValues

from acts_sql.errors import ActsSqlError

__all__ = ["JsonExtraction", "JsonExtractionError", "extract_json", "parse_json_object"]

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\r?\n?(.*?)(?:```|\Z)", re.DOTALL)
_MAX_STARTS = 64
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_JSON_WORDS = {"true", "false", "null"}
_PYTHON_WORDS = {"True", "False", "None"}
_WORDS = _JSON_WORDS | _PYTHON_WORDS
_CUT = object()  # a value the end of the text cut off
_STRICT = json.JSONDecoder(strict=False)
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_JSON_INT = re.compile(r"-?(0|[1-9]\d*)")
_JSON_NUMBER = re.compile(r"-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?")
_VALUE_START = re.compile(r"[{\[\"'A-Za-z_0-9+.-]")
_BLANK = re.compile(r"(?:\s+|//[^\n]*(?:\n|\Z)|/\*.*?(?:\*/|\Z))*", re.DOTALL)
_TRUNCATED = "closed truncated output"


class JsonExtractionError(ActsSqlError):
    """No JSON object could be taken from an LLM reply; `reason` says why."""

    def __init__(self, reason: str, **details: Any) -> None:
        super().__init__(reason, **details)
        self.reason = reason


@dataclass(frozen=True)
class JsonExtraction:
    """The object found in a reply and the repairs that were needed (empty: none)."""

    value: dict[str, Any]
    repairs: list[str] = field(default_factory=list)


def extract_json(text: str) -> dict[str, Any]:
    """The JSON object in `text`, repaired if needed; raises JsonExtractionError."""
    return parse_json_object(text).value


def parse_json_object(text: str) -> JsonExtraction:
    """Like :func:`extract_json`, and also say which repairs were applied."""
    if not text or not text.strip():
        raise JsonExtractionError("the reply is empty")
    stripped = text.strip()
    fenced = [body for _, body in _FENCE.findall(stripped)]

    for segment in [stripped, *(body.strip() for body in fenced)]:
        value = _strict_whole(segment)
        if isinstance(value, dict):
            return JsonExtraction(value, [] if segment == stripped else ["removed code fence"])

    failures: list[tuple[int, str]] = []
    segments = [(body, "removed code fence") for body in fenced] + [(stripped, "")]
    for segment, note in segments:
        resume_at = 0
        for start in _starts(segment):
            if start < resume_at:
                continue  # inside an object that could not be read: not a candidate
            try:
                value, end = _STRICT.raw_decode(segment, start)
                repairs = [note] if note else []
            except ValueError:
                try:
                    value, end, repaired = _repair(segment, start)
                except _Unparsable as exc:
                    failures.append((exc.position - start, exc.describe(segment)))
                    resume_at = exc.position
                    continue
                repairs = ([note] if note else []) + repaired
            if start > 0 or segment[end:].strip():
                repairs.append("removed text around the object")
            return JsonExtraction(value, _unique(repairs))

    if not failures:
        raise JsonExtractionError(
            "no JSON object found in the reply (no '{' in it)", excerpt=_excerpt(stripped)
        )
    _, reason = max(failures, key=lambda failure: failure[0])
    raise JsonExtractionError(f"malformed JSON object: {reason}", excerpt=_excerpt(stripped))


def _strict_whole(segment: str) -> Any:
    try:
        return _STRICT.decode(segment)
    except ValueError:
        return None


def _starts(segment: str) -> list[int]:
    return [match.start() for match in re.finditer(r"\{", segment)][:_MAX_STARTS]


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _skip_blank(text: str, position: int) -> int:
    """The position after any whitespace and comments at `position`."""
    match = _BLANK.match(text, position)
    return match.end() if match else position


def _excerpt(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# What json_repair logs and this module accepts: a substring of the log line and the
# repair to name (None: named elsewhere, or not worth naming). Any other log line is a
# repair of a kind not vetted here, and the object is refused.
_ACCEPTED_LOGS: list[tuple[str, str | None]] = [
    ("Found line comment", "removed comments"),
    ("Found block comment", "removed comments"),
    ("unclosed block comment", "removed comments"),
    ("would have closed the string", "escaped quotes inside strings"),
    ("comma that belongs to the string", "escaped quotes inside strings"),
    ("missed the closing", None),  # truncation: see _Reader._check_closed
    ("found a literal instead of a quote", None),  # bare keys: see _Reader.parse_string
    ("in object key context, we found a :", None),
    ("Python None literal", None),
    ("escape", None),
    ("keeping duplicate-key overwrite behavior", None),
]
_REFUSALS = {
    "missed a : after a key": "expected ':' after a key",
    "Parsed object is empty": "no member could be read",
}


class _Unparsable(Exception):
    def __init__(self, message: str, position: int) -> None:
        super().__init__(message)
        self.message = message
        self.position = position

    def describe(self, text: str) -> str:
        position = min(self.position, len(text))
        line = text.count("\n", 0, position) + 1
        column = position - (text.rfind("\n", 0, position) + 1) + 1
        return f"{self.message} at line {line}, column {column}"


def _repair(segment: str, start: int) -> tuple[dict[str, Any], int, list[str]]:
    """The object at `start` read by json_repair, where it ends, and the repairs named."""
    reader = _Reader(segment, start)
    value = reader.parse_json()
    end = min(reader.index, len(segment))
    if not isinstance(value, dict):
        raise _Unparsable("no object could be read", start)
    if not value and _TRUNCATED in reader.repairs:
        raise _Unparsable("the object was cut off before its first member", end)
    return value, end, reader.repairs


class _Reader(JSONParser):
    """json_repair's parser with this module's policy hooked into its steps.

    Positions are indexes into the text; refusals raise :class:`_Unparsable`. A value
    cut off by the end of the text is read as `_CUT`, and its member or item dropped.
    """

    def __init__(self, text: str, start: int) -> None:
        super().__init__(text, None, True)
        self.text = text
        self.index = start
        self.repairs: list[str] = []
        self.closers: set[int] = set()  # positions of the closers read so far

    def note(self, repair: str) -> None:
        if repair not in self.repairs:
            self.repairs.append(repair)

    def _log(self, text: str) -> None:
        for needle, repair in _ACCEPTED_LOGS:
            if needle in text:
                if repair:
                    self.note(repair)
                return
        reason = next((why for needle, why in _REFUSALS.items() if needle in text), None)
        raise _Unparsable(
            reason or f"unrepairable damage ({text[0].lower()}{text[1:]})", self.index
        )

    def _cut(self) -> object:
        self.index = len(self.text)
        return _CUT

    def parse_string(self) -> Any:
        text, at = self.text, _skip_blank(self.text, self.index)
        key = self.context.current == ContextValues.OBJECT_KEY
        word_match = _WORD.match(text, at)
        word = word_match.group(0) if word_match else ""
        if text[at : at + 1] == "'":
            self.note("replaced single quotes")
        elif word and key:
            self.note("quoted bare keys")
            self._expect_colon(at + len(word), word)
        elif word in _PYTHON_WORDS:
            self.note("replaced Python literals")
        elif word and at + len(word) >= len(text) and any(w.startswith(word) for w in _WORDS):
            return self._cut()
        elif word and word not in _JSON_WORDS:
            raise _Unparsable(f"unexpected word {word!r} where a value was expected", at)
        value = super().parse_string()
        if key:
            self._expect_colon(self.index, value)
        return value

    def _expect_colon(self, position: int, key: Any) -> None:
        after = _skip_blank(self.text, position)
        if after < len(self.text) and self.text[after] != ":":
            raise _Unparsable(f"expected ':' after the key {key!r}", after)

    def parse_json(self, *args: Any, **kwargs: Any) -> Any:
        text, at = self.text, _skip_blank(self.text, self.index)
        member = self.context.current == ContextValues.OBJECT_VALUE
        if member and at >= len(text):
            return self._cut()
        if member and not _VALUE_START.match(text, at):
            raise _Unparsable(f"unexpected character {text[at]!r} where a value was expected", at)
        value = super().parse_json(*args, **kwargs)
        after = _skip_blank(text, self.index)
        if member and after < len(text) and text[after] not in ",}":
            self.note("inserted missing commas")
        return value

    def parse_number(self) -> Any:
        text = self.text
        match = _NUMBER.match(text, self.index)
        if match is None and not text[self.index :].strip(" \t\r\n+-."):
            return self._cut()
        if match is None or text[match.end() : match.end() + 1].isalpha():
            return super().parse_number()
        self.index, literal = match.end(), match.group(0)
        if _JSON_INT.fullmatch(literal):
            return int(literal)
        if not _JSON_NUMBER.fullmatch(literal):
            self.note("normalised numbers")
        return float(literal)

    def parse_object(self, *args: Any, **kwargs: Any) -> Any:
        value = super().parse_object(*args, **kwargs)
        self._check_closed("}")
        if isinstance(value, dict):
            return {key: item for key, item in value.items() if item is not _CUT}
        return value

    def parse_array(self, *args: Any, **kwargs: Any) -> Any:
        value = super().parse_array(*args, **kwargs)
        self._check_closed("]")
        return [item for item in value if item is not _CUT]

    def _check_closed(self, closer: str) -> None:
        """Note a trailing comma before the container's `closer`, or its absence at the end."""
        before = self.text[: self.index].rstrip()
        if before.endswith(closer) and len(before) not in self.closers:
            self.closers.add(len(before))
            if before[:-1].rstrip().endswith(","):
                self.note("removed trailing commas")
        elif self.index >= len(self.text):
            self.note(_TRUNCATED)
