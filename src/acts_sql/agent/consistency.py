"""Does a judge's reason contradict its verdict?

Small models often write "accept" next to a reason that says the candidate is
wrong ("the query still counts every booking, not overlapping ones"). The
reason is written first (the judge's schema orders it before the verdict),
so it is the better evidence: an acceptance whose reason says the candidate
is wrong, fails, or should be changed is not an acceptance.

The test is lexical and deliberately narrow: a list of phrases that state a
fault of the candidate. A reason that only mentions an error being fixed
("fixes the syntax error") is not a contradiction. Table-driven fixtures live
in tests/agent/test_consistency.py.

A reason can also say nothing of the candidate: `copied_from` finds a reason
that is mostly copied from what the judge was shown (the issue's text, its
instructions, the groups) or from a reason it rejected another result with.
Such a reason is no evidence for an acceptance either.

Nor is a reason that vouches for the user's SQL: `endorsement_phrase` finds a
sentence about the user's SQL that calls it correct or says it needs no
change ("The user's SQL statement is already correct and does not need any
changes."). The candidate a judge accepts is never the user's SQL (the trust
rules refuse that), so such a reason speaks for a query that is not on the
table. With the 1.5B model both of its wrong acceptances on the 40
development tasks came with exactly that reason.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_FAULT_PATTERNS = [
    # "is wrong", "is still incorrect", "seems not correct", "are invalid"
    r"\b(is|are|was|were|seems?|looks?|remains?)\s+(still\s+|also\s+)?"
    r"(wrong|incorrect|not\s+(correct|right|valid)|invalid|flawed|broken)\b",
    # "does not answer / match / return / address / solve / fix / handle / work"
    r"\b(does\s*n[o']t|do\s*n[o']t|did\s*n[o']t|cannot|can\s*n[o']t|fails?\s+to|won'?t)\s+"
    r"(answer|address|match|return|produce|give|solve|fix|handle|work|meet|satisfy|"
    r"consider|account|include|filter|resolve|reflect|do\s+what|appear|show|contain|exist|"
    r"apply|insert|update|list|do\s+(it|this|that|so))\b",
    # "is not returning the correct result" (a linear judge's accept with the 0.5B, SQLite_64)
    r"\bnot\s+(returning|producing|giving|showing|computing)\s+the\s+"
    r"(correct|right|expected|desired)\b",
    # "does not correctly classify", "cannot properly handle": an adverb of manner before any
    # verb (an acts judge accepted with "The function does not correctly classify ...", the
    # reason it had rejected the same function with)
    r"\b(does\s*n[o']t|do\s*n[o']t|did\s*n[o']t|cannot|can\s*n[o']t|fails?\s+to)\s+"
    r"(correctly|properly|accurately|fully)\s+\w+",
    # "not what the user / issue asked"
    r"\bnot\s+what\s+the\s+(user|issue|question)\b",
    # "should use X instead"
    r"\bshould\s+\w+(\s+\w+){0,4}\s+instead\b",
    # "still returns the same rows as the user's", "same (wrong) result as the original"
    r"\b(same|identical)\s+(wrong\s+|incorrect\s+)?(rows|result|results|output)\s+as\s+the\s+"
    r"(user|original|issue)",
    r"\b(still|also)\s+(returns|produces|gives|has)\s+(the\s+)?(wrong|same|incorrect|duplicate)\b",
    # "reject", "not acceptable"
    r"\breject(ed|ing)?\b",
    r"\bnot\s+acceptable\b",
    # "error: ..." as a finding, "fails with", "raises an error"
    r"\b(fails|failed)\s+(with|because|on)\b",
    r"\b(raises|throws|gives|returns)\s+an?\s+error\b",
]
_FAULT = re.compile("|".join(f"(?:{p})" for p in _FAULT_PATTERNS), re.IGNORECASE)

# Phrases that describe a fault the candidate has REMOVED: "no longer returns the
# wrong rows", "fixes the error". Cut before the fault test runs.
_RESOLVED = re.compile(
    r"\b(no\s+longer|fix(es|ed)?|correct(s|ed)|resolv(es|ed)|avoid(s|ed)?|instead\s+of)\b"
    r"[^.;]*",
    re.IGNORECASE,
)


# A sentence about the user's SQL ("the original query is wrong because ...")
# describes the problem, not the candidate: it is skipped unless it also names
# the candidate.
_ABOUT_ORIGINAL = re.compile(
    r"\b(user'?s|original|initial|previous|old|issue)\s+(sql|query|statement|version|one)\b",
    re.IGNORECASE,
)
_ABOUT_CANDIDATE = re.compile(
    r"\b(candidate|this\s+(sql|query|one|version|group)|new\s+(sql|query)|the\s+fix|group\s+[A-Z])\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.;!?])\s+|\s+but\s+|\s+however,?\s+", re.IGNORECASE)


def fault_phrase(reason: str) -> str | None:
    """The phrase of `reason` that states a fault of the candidate, or None."""
    for sentence in _SENTENCE.split(reason or ""):
        if _ABOUT_ORIGINAL.search(sentence) and not _ABOUT_CANDIDATE.search(sentence):
            continue
        found = _FAULT.search(_RESOLVED.sub(" ", sentence))
        if found:
            return found.group(0)
    return None


# Said of the user's SQL: it needs no change, or it is right as it stands.
_NO_CHANGE = re.compile(
    r"\b(does\s*n[o']t|do\s*n[o']t)\s+(need|require)\s+(any\s+)?"
    r"(changes?|modifications?|fix(es|ing)?|corrections?|rewrit\w*)\b"
    r"|\bno\s+(changes?|modifications?|fix(es)?|corrections?)\s+(are\s+|is\s+)?"
    r"(needed|required|necessary)\b"
    r"|\bneeds\s+no\b",
    re.IGNORECASE,
)
_RIGHT_AS_IS = re.compile(
    r"\b(is|are|was|seems?|looks?)\s+(already\s+)?(correct|right|fine|valid|sufficient)\b"
    r"|\balready\s+(correct|right|fine|valid|sufficient|does\s+what|"
    r"(returns|produces|gives|generates|yields|outputs|achieves)\s+the\s+"
    r"(correct|right|expected|desired|required|wanted))\b"
    r"|\balready\s+(uses?|using|includes?|including|has|handles?|handling)\b[^.;]*"
    r"\b(correct|right|sufficient|needed|required|proper)\b"
    r"|\bwhich\s+is\s+(sufficient|correct|enough)\b"
    r"|\balready\s+(correctly|properly|rightly)\b"
    r"|\b(is|are|was)\s+(already\s+)?(correctly|properly)\s+(written|formed|structured|"
    r"implemented)\b",
    re.IGNORECASE,
)
_NEGATED = re.compile(r"\b(not|n't|never|no\s+longer|in(correct|valid|sufficient))\b", re.I)


def endorsement_phrase(reason: str) -> str | None:
    """The phrase of `reason` that calls the user's SQL right as it is, or None.

    Only a sentence about the user's SQL (and not also about the candidate)
    counts; a sentence that negates its own praise ("is not correct") does not."""
    for sentence in _SENTENCE.split(reason or ""):
        if not _ABOUT_ORIGINAL.search(sentence) or _ABOUT_CANDIDATE.search(sentence):
            continue
        found = _NO_CHANGE.search(sentence)
        if found:
            return found.group(0)
        found = _RIGHT_AS_IS.search(sentence)
        if found and not _NEGATED.search(sentence):
            return found.group(0)
    return None


COPY_RUN_WORDS = 5
"""A reason's words count as copied when they lie in a run of this many words that a source
holds, in order."""
COPIED_SHARE = 0.75
"""A reason this much copied says nothing of its own. In the kept runs with the 0.5B on 16
tasks, the 6 "accept" replies at 0.8 and above restated the issue ("The issue asks for a list
of all years between two given dates from the 'loan' table ...") and all 6 were wrong; the
"accept" replies that described their candidate were at 0.28 and below."""
MIN_REASON_WORDS = 8
_WORD = re.compile(r"[a-z0-9_']+")


def copied_share(reason: str, sources: list[str]) -> float:
    """The share of `reason`'s words that lie in a run of `COPY_RUN_WORDS` words found in
    one of `sources` (0.0 for a reason shorter than `MIN_REASON_WORDS` words)."""
    words = _WORD.findall(reason.lower())
    n = COPY_RUN_WORDS
    if len(words) < max(n, MIN_REASON_WORDS):
        return 0.0
    runs: set[tuple[str, ...]] = set()
    for source in sources:
        held = _WORD.findall(source.lower())
        runs.update(tuple(held[i : i + n]) for i in range(len(held) - n + 1))
    covered = [False] * len(words)
    for i in range(len(words) - n + 1):
        if tuple(words[i : i + n]) in runs:
            covered[i : i + n] = [True] * n
    return sum(covered) / len(words)


def copied_from(reason: str, sources: Mapping[str, str]) -> tuple[str, float] | None:
    """(what it was copied from most, the share copied from all) when at least
    `COPIED_SHARE` of `reason` is copied from `sources` (name -> text); None otherwise."""
    share = copied_share(reason, list(sources.values()))
    if share < COPIED_SHARE:
        return None
    most = max(sources, key=lambda name: copied_share(reason, [sources[name]]))
    return most, share
