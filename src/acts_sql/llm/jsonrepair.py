"""Take the JSON object out of an LLM reply, repairing common damage.

LLM replies wrap JSON in prose and code fences, and damage it: trailing
commas, single quotes, Python literals, bare keys, unescaped quotes inside
strings, and output cut off mid-way. :func:`extract_json` tries, in order:

1. the whole reply, then each fenced block, as strict JSON;
2. each ``{`` in the fenced blocks, then in the whole reply: strict JSON with
   text around it, else a lenient parser that repairs what it can. An object
   that cannot be read is skipped whole (the objects nested in it are not
   candidates), so a broken reply is reported, not half-read.

Strict means :mod:`json` with raw control characters (such as newlines in a
multi-line SQL string) allowed inside strings.
Repairs are heuristics that apply only where the reading is unambiguous
enough; what they cannot fix raises :class:`JsonExtractionError` with a
reason, which a caller can feed back to the model.

Why not the json-repair package: a wrapper over it was measured against every
model reply kept under ``results/`` (4,599 replies). As first written it read 47
distinct replies differently (cut-off array items dropped, complete SQL strings
refused); with policy it still read one differently (a string holding ``", "``
and a text table: json-repair ends strings by a key look-ahead across newlines),
and matching that one took this module's string reader back (366 lines). The
readings are pinned by ``tests/llm/test_llm_recorded_replies.py``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from acts_sql.errors import ActsSqlError

__all__ = ["JsonExtraction", "JsonExtractionError", "extract_json", "parse_json_object"]

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\r?\n?(.*?)(?:```|\Z)", re.DOTALL)
_MAX_STARTS = 64
_LITERALS: dict[str, Any] = {
    "true": True,
    "false": False,
    "null": None,
    "True": True,
    "False": False,
    "None": None,
}
_PYTHON_LITERALS = {"True", "False", "None"}
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_STRICT = json.JSONDecoder(strict=False)
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_KEY_AHEAD = re.compile(r"(\"[^\"\n]*\"|'[^'\n]*'|[A-Za-z_][A-Za-z0-9_]*)[ \t]*:")
_KEY_AT_END = re.compile(r"(\"[^\"\n]*\"?|'[^'\n]*'?|[A-Za-z_][A-Za-z0-9_]*)\s*\Z")
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
                parser = _Lenient(segment, start)
                try:
                    value = parser.parse()
                except _Unparsable as exc:
                    failures.append((exc.position - start, exc.describe(segment)))
                    resume_at = exc.position
                    continue
                end = parser.pos
                repairs = ([note] if note else []) + parser.repairs
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


class _Unparsable(Exception):
    def __init__(self, message: str, position: int) -> None:
        super().__init__(message)
        self.message = message
        self.position = position

    def describe(self, text: str) -> str:
        line = text.count("\n", 0, self.position) + 1
        column = self.position - (text.rfind("\n", 0, self.position) + 1) + 1
        return f"{self.message} at line {line}, column {column}"


class _EndOfInput(Exception):
    """The text ended where a value was expected: the reply was cut off."""


class _Lenient:
    """A forgiving JSON reader for one object starting at `start`.

    Accepts single-quoted strings, bare identifier keys, Python literals,
    trailing, doubled or missing commas between members, comments, raw
    control characters and unescaped quotes inside strings, and closes
    whatever is open when the text ends. `repairs` names each repair applied.
    """

    def __init__(self, text: str, start: int) -> None:
        self.text = text
        self.pos = start
        self.repairs: list[str] = []

    def parse(self) -> dict[str, Any]:
        value = self._object()
        if not value and _TRUNCATED in self.repairs:
            raise _Unparsable("the object was cut off before its first member", self.pos)
        return value

    def _note(self, repair: str) -> None:
        if repair not in self.repairs:
            self.repairs.append(repair)

    def _peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def _skip(self) -> None:
        text = self.text
        while self.pos < len(text):
            if text[self.pos] in " \t\r\n":
                self.pos += 1
            elif text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end + 1
                self._note("removed comments")
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                self.pos = len(text) if end < 0 else end + 2
                self._note("removed comments")
            else:
                return

    def _value(self, context: str) -> Any:
        self._skip()
        char = self._peek()
        if not char:
            raise _EndOfInput
        if char == "{":
            return self._object()
        if char == "[":
            return self._array()
        if char in "\"'":
            return self._string(context)
        if char in "-+.0123456789":
            return self._number()
        if char.isalpha() or char == "_":
            start = self.pos
            word = self._word()
            if word in _LITERALS:
                if word in _PYTHON_LITERALS:
                    self._note("replaced Python literals")
                return _LITERALS[word]
            if self.pos >= len(self.text) and any(name.startswith(word) for name in _LITERALS):
                raise _EndOfInput
            raise _Unparsable(f"unexpected word {word!r} where a value was expected", start)
        raise _Unparsable(f"unexpected character {char!r} where a value was expected", self.pos)

    def _word(self) -> str:
        start = self.pos
        while self.pos < len(self.text) and (
            self.text[self.pos].isalnum() or self.text[self.pos] == "_"
        ):
            self.pos += 1
        return self.text[start : self.pos]

    def _object(self) -> dict[str, Any]:
        self.pos += 1  # the "{"
        result: dict[str, Any] = {}
        expect_member = True
        while self._next_entry("}", expect_member, bool(result), "an object member"):
            char = self._peek()
            key_start = self.pos
            if char in "\"'":
                try:
                    key = self._string("key")
                except _EndOfInput:
                    self._note(_TRUNCATED)
                    return result
            elif char.isalpha() or char == "_":
                key = self._word()
                self._note("quoted bare keys")
            else:
                raise _Unparsable(
                    f"unexpected character {char!r} where a key was expected", key_start
                )
            self._skip()
            if not self._peek():
                self._note(_TRUNCATED)
                return result
            if self._peek() != ":":
                raise _Unparsable(f"expected ':' after the key {key!r}", self.pos)
            self.pos += 1
            try:
                result[key] = self._value("member")
            except _EndOfInput:
                self._note(_TRUNCATED)
                return result
            self._skip()
            if self._peek() == ",":
                self.pos += 1
                expect_member = True
            elif _KEY_AHEAD.match(self.text, self.pos):
                self._note("inserted missing commas")
                expect_member = True
            else:
                expect_member = False
        return result

    def _array(self) -> list[Any]:
        self.pos += 1  # the "["
        result: list[Any] = []
        expect_item = True
        while self._next_entry("]", expect_item, bool(result), "an array item"):
            try:
                result.append(self._value("item"))
            except _EndOfInput:
                self._note(_TRUNCATED)
                return result
            self._skip()
            expect_item = self._peek() == ","
            if expect_item:
                self.pos += 1
        return result

    def _next_entry(self, closer: str, expecting: bool, has_entries: bool, after: str) -> bool:
        """Move to the next entry of an object or array; False when the container ends here.

        Skips stray commas (noted), steps over `closer`, and notes a truncation when the
        input stops first. `expecting` says whether a comma has just been read (or the
        container just opened): an entry without one is an error naming `after`.
        """
        while True:
            self._skip()
            char = self._peek()
            if not char:
                self._note(_TRUNCATED)
                return False
            if char == closer:
                if expecting and has_entries:
                    self._note("removed trailing commas")
                self.pos += 1
                return False
            if char == "," and expecting:
                self._note("removed extra commas")
                self.pos += 1
                continue
            if not expecting:
                raise _Unparsable(f"expected ',' or '{closer}' after {after}", self.pos)
            return True

    def _string(self, context: str) -> str:
        """A quoted string; `context` is "key", "member" (object value) or "item"."""
        text = self.text
        quote = text[self.pos]
        if quote == "'":
            self._note("replaced single quotes")
        self.pos += 1
        parts: list[str] = []
        while True:
            if self.pos >= len(text):
                if context == "key":
                    raise _EndOfInput
                self._note(_TRUNCATED)
                return "".join(parts)
            char = text[self.pos]
            if char == "\\":
                parts.append(self._escape(quote))
                continue
            if char == quote:
                if self._closes_string(context):
                    self.pos += 1
                    return "".join(parts)
                self._note("escaped quotes inside strings")
            parts.append(char)
            self.pos += 1

    def _closes_string(self, context: str) -> bool:
        """Does the quote at `pos` end the string? Only if what follows fits there."""
        text = self.text
        at = _skip_blank(text, self.pos + 1)
        if at >= len(text):
            return True
        char = text[at]
        if context == "key":
            return char == ":"
        if context == "item":
            return char in ",]"
        if char == "}":
            return True
        if char == ",":
            after = _skip_blank(text, at + 1)
            return (
                after >= len(text)
                or text[after] == "}"
                or _KEY_AHEAD.match(text, after) is not None
                or _KEY_AT_END.match(text, after) is not None
            )
        return _KEY_AHEAD.match(text, at) is not None

    def _escape(self, quote: str) -> str:
        text = self.text
        if self.pos + 1 >= len(text):
            self.pos += 1
            return ""
        code = text[self.pos + 1]
        if code == "u":
            digits = text[self.pos + 2 : self.pos + 6]
            if len(digits) == 4 and all(c in "0123456789abcdefABCDEF" for c in digits):
                self.pos += 6
                return chr(int(digits, 16))
        self.pos += 2
        if code in _ESCAPES:
            return _ESCAPES[code]
        if code == quote:
            return quote
        self._note("kept unknown escapes")
        return "\\" + code

    def _number(self) -> int | float:
        match = _NUMBER.match(self.text, self.pos)
        if match is None:
            if not self.text[self.pos :].strip(" \t\r\n+-."):
                self.pos = len(self.text)
                raise _EndOfInput
            raise _Unparsable("malformed number", self.pos)
        literal = match.group(0)
        self.pos = match.end()
        if re.fullmatch(r"-?(0|[1-9]\d*)", literal):
            return int(literal)
        if not re.fullmatch(r"-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?", literal):
            self._note("normalised numbers")
        return float(literal)
