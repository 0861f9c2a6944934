"""`detect_ambiguities`: underspecified phrases of the issue, with readings.

Input: `{}` (optionally `{"focus": "..."}`). The LLM lists phrases of the
issue that admit several schema-grounded interpretations (2-3 each). The
engine turns every interpretation into a child branch `<node>.<k>`; phrases
with a single interpretation are reported but do not branch. At most
MAX_PHRASES phrases and MAX_READINGS readings per phrase are kept.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from acts_sql.prompts.context import format_path
from acts_sql.protocol import Ambiguity, AmbiguityReport, Purpose
from acts_sql.tools.base import (
    Tool,
    ToolArgs,
    ToolCall,
    ToolEnv,
    ToolOutcome,
    ToolOutput,
    not_advertised,
)
from acts_sql.tools.llm_call import ask_tool_llm

MAX_PHRASES = 2
MAX_READINGS = 3
SIMILAR = 0.88


class DetectAmbiguitiesArgs(ToolArgs):
    focus: str = not_advertised("accepted; the tool list shows `{}`: the whole issue", "")


class Ambiguities(AmbiguityReport, ToolOutput):
    """The phrases kept (`trim_report`); the engine branches on their readings."""


class DetectAmbiguitiesTool(Tool[DetectAmbiguitiesArgs]):
    name = "detect_ambiguities"
    description = (
        "lists underspecified phrases of the issue with 2-3 interpretations each; "
        "each interpretation becomes a branch."
    )
    Args = DetectAmbiguitiesArgs
    Output = Ambiguities
    uses_execution = False
    produces_candidate = False

    def run(self, env: ToolEnv, call: ToolCall, args: DetectAmbiguitiesArgs) -> ToolOutcome:
        reply = ask_tool_llm(
            env,
            Purpose.DETECT_AMBIGUITIES,
            "detect_ambiguities.txt",
            AmbiguityReport,
            path=format_path(call.path),
            focus=args.focus or "(the whole issue)",
        )
        if reply.value is None:
            return ToolOutcome.failed(f"no usable ambiguity report: {reply.error}")
        report = trim_report(reply.value)
        return ToolOutcome(status="done", summary=summarize(report), output=report)


def trim_report(report: AmbiguityReport) -> Ambiguities:
    """Drop empty readings, merge near-duplicate ones, cap phrases and readings.

    Weak models often list one reading twice in other words, or repeat the
    phrase itself as a reading; such a phrase does not branch. Readings are
    the same when their words match after case, punctuation and filler words
    are ignored, or when they are nearly identical text (similarity >= 0.88).
    A reading already given for an earlier phrase is not repeated.
    """
    kept: list[Ambiguity] = []
    used: list[str] = []
    for item in report.ambiguities:
        phrase = item.phrase.strip()
        readings: list[str] = []
        for reading in (r.strip() for r in item.interpretations):
            if not reading or _same_reading(reading, phrase):
                continue
            if any(_same_reading(reading, r) for r in readings + used):
                continue
            readings.append(reading)
        if phrase and readings:
            kept.append(Ambiguity(phrase=phrase, interpretations=readings[:MAX_READINGS]))
            used.extend(readings)
    return Ambiguities(ambiguities=kept[:MAX_PHRASES])


_FILLER = {"the", "a", "an", "of", "is", "as", "to", "it", "that", "which", "means", "mean"}


def _words(text: str) -> str:
    words = re.findall(r"[a-z0-9_]+", text.lower())
    return " ".join(w for w in words if w not in _FILLER)


def _same_reading(a: str, b: str) -> bool:
    wa, wb = _words(a), _words(b)
    if wa == wb:
        return True
    return SequenceMatcher(None, wa, wb).ratio() >= SIMILAR


def branching_readings(report: AmbiguityReport) -> list[tuple[str, str]]:
    """(phrase, interpretation) pairs that become branches: phrases with 2+ readings."""
    return [
        (item.phrase, reading)
        for item in report.ambiguities
        if len(item.interpretations) >= 2
        for reading in item.interpretations
    ]


def summarize(report: AmbiguityReport) -> str:
    if not report.ambiguities:
        return "no ambiguous phrase found"
    lines = []
    for item in report.ambiguities:
        readings = "; ".join(f"({k}) {r}" for k, r in enumerate(item.interpretations, 1))
        lines.append(f"{item.phrase!r}: {readings}")
    return "\n".join(lines)
