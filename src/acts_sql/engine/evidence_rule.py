"""The evidence gate's rule, pure: what the gathered candidates must show to be accepted.

The rule (`EVIDENCE_RULE`, named in the `evidence` event and in the stop reason): the run
**accepts**, without a plan or a tree, when

- the user's SQL fails, or the issue says its rows are wrong (not a question of speed:
  `trust.expects_same_rows`); in text-to-SQL mode (no user SQL) there is no such condition;
- at least `AGREEMENT` of the gathered candidates run and return the same result set (the
  result fingerprint of `acts_sql.engine.fingerprint`; a statement without a result set has
  nothing to agree on), and no other result has as many;
- when the user's SQL runs (a slip in SQL that runs, or wrong rows), either a rule's
  repair of the user's SQL is among them or they are `SLIP_AGREEMENT` (two samples of one
  prompt share the model's reading of the issue: a kept development run accepted such a pair
  wrongly);
- the raw rewrite (or its repair, ``raw:rule:...``) or the rule repair of the user's SQL is
  among them (samples that agree with each other alone are not enough: the issue's "a minimal
  repair or the raw rewrite runs with a different result"; so no sample is drawn unless one
  of them returns such a result);
- that result is not refused (`TrustContext.refusal`: not the user's SQL, not its rows); in
  text-to-SQL mode, where nothing is refused, the witness is among them
  (`acts_sql.engine.witness`): the first query is the model's own, and rewrites written from
  it that agree echo it rather than confirm it;
- the result checks (`acts_sql.engine.result_checks`) do not fail, and in text-to-SQL mode
  at least one shape check passes (the names check below guards; it is no evidence there);
- no agreeing candidate drops a name that the question and the user's SQL both give
  (`acts_sql.engine.named_names`); a candidate that reads a table neither of them names has
  no vote at all (`Evidence.unnamed`).

Otherwise nothing is decided: the gathered candidates join the first pool of the search, as
the raw rewrite and the rule repair always did (no call is lost), and the search runs.
The gathering (calls, statements) is `acts_sql.engine.evidence.EvidenceStage`.

**After each pool, before its judgement**, the same rule runs once more, on every candidate
of the run so far (`EvidenceStage._agreed_after_pool`): the samples of the search's pools
add their votes (``pooled``: never an anchor), and a result the raw rewrite or the rule
repair returns that they come to agree on is accepted without asking the judge. A result
the judge rejected, with a reason that stands, counts as refused. There, and only there,
when the user's SQL runs (a silent slip: the raw rewrite may have returned the user's rows, so
that no result has an anchor), `UNANIMOUS` votes for one result with no vote for any other
stand in for the anchor, when two different statements at least cast them (one reply repeated
is one derivation) and they outnumber the votes of the run's candidates that fail (a model
that mostly fails and agrees on its one query that runs is not confirming it); the checks
still hold. When the user's SQL fails, a result that neither the raw rewrite nor a rule
repair reaches needs the judge.

**Before any model call**, a second rule (`LEXICAL_RULE`, `repair_verdict`): when the user's
SQL fails (an error, or blocked by the guard) and the rule chain's repair of it was made by lexical
rules alone (`Rule.lexical`: a keyword's or a name's spelling, quotes, a comma, a semicolon,
another dialect's function; `is_lexical`), the repair is accepted with no call when it runs
with a result set and the result checks and the names check above let it stand. Such a
repair changes how the user's SQL is written, not what it asks; the rules that guess at
meaning (a column added to GROUP BY, a lenient re-reading, a transpiled statement, the logic
rules) never qualify.

**A certain repair** (`CERTAIN_RULE`, the same verdict): when the user's SQL fails, or runs and
the issue says its rows are wrong, and the chain's repair of it was made by lexical rules and
at least one certain rule (`Rule.certain`: a construct no question can mean as written, such as
`x = NULL`, true for no row; `is_certain`), the repair is accepted with no call on the same
terms; when the user's SQL runs, a repair that returns the user's rows is refused as any
candidate is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel, Field

from acts_sql.db.result import ExecResult
from acts_sql.engine.named_names import NamedNames
from acts_sql.engine.result_checks import ShapeCheck, describe, failed, passed, shape_checks
from acts_sql.engine.trust import TrustContext
from acts_sql.engine.witness import is_witness, unwitnessed
from acts_sql.prompts.context import TaskContext
from acts_sql.sql.rules import CERTAIN_RULES, LEXICAL_RULES

EVIDENCE_RULE = "evidence: agreement"
LEXICAL_RULE = "evidence: a lexical repair"
CERTAIN_RULE = "evidence: a certain repair"
EVIDENCE_NODE = "evidence"
"""The node an accepted candidate is registered under (there is no tree); the gate's calls,
statements and an `evidence` event that accepts nothing belong to no node."""
AGREEMENT = 2
"""Independent candidates that must return the same result."""
SLIP_AGREEMENT = 3
"""When the user's SQL runs: votes the model's own candidates need when no rule's repair of
the user's SQL is among them (two samples of one prompt share the model's reading)."""
RULE_ORIGIN = "rule:"
UNANIMOUS = 3
"""After a pool: votes that, all for one result and none for another, stand without an anchor
when at least two different statements cast them (a reply repeated is one derivation)."""
MAX_SAMPLES = 2
"""Raw samples the gate may draw: with the raw rewrite, at most 3 LLM calls."""
SAMPLE_ORIGIN = "raw:sample"


class Evidence(BaseModel):
    """One gathered candidate as the rule sees it."""

    origin: str
    sql: str
    result: ExecResult
    fingerprint: str | None = None
    refusal: str | None = None
    """The trust rules' refusal (the user's SQL or its rows): never accepted."""
    unnamed: str | None = None
    """It reads a table that neither the question nor the user's SQL names
    (`NamedNames.unnamed`): no vote here, though the search's judge may still accept it."""
    rejected: bool = False
    """Its refusal is the judge's (its rows rejected, the rejection standing), not the trust
    rules': for unanimity it still counts as a vote against."""
    pooled: bool = False
    """A candidate a search pool drew (the rule after a pool): it adds its vote but is never
    an anchor, as a raw sample is not."""


class EvidenceVerdict(BaseModel):
    """What the gate decided, and why."""

    accepted: bool
    reason: str
    fingerprint: str | None = None
    """The agreeing result (set when some result has the most votes, accepted or not)."""
    checks: list[ShapeCheck] = Field(default_factory=list)


def anchors(evidence: Sequence[Evidence]) -> set[str]:
    """The results an acceptance may rest on: those of the raw rewrite or of the rule repair
    (not of a sample, a pool's candidate or the witness alone) that ran with a result set and
    have a vote (`usable`)."""
    return {
        e.fingerprint
        for e in usable(evidence)
        if e.fingerprint
        and not e.pooled
        and not e.origin.startswith(SAMPLE_ORIGIN)
        and not is_witness(e.origin)
    }


def usable(evidence: Sequence[Evidence]) -> list[Evidence]:
    """Candidates whose result may be agreed on: ran, returned a result set, not refused, and
    read no table nobody named."""
    return [e for e in unrefused(evidence) if e.unnamed is None]


def unrefused(evidence: Sequence[Evidence]) -> list[Evidence]:
    """Candidates whose result may be accepted at all, by agreement or by the search's judge:
    ran, returned a result set, not refused."""
    return [e for e in evidence if e.fingerprint and e.result.columns and e.refusal is None]


def verdict(
    evidence: list[Evidence],
    *,
    question: str,
    generated: bool,
    needed: int = AGREEMENT,
    named: NamedNames | None = None,
    unanimous: int | None = None,
    failed: int = 0,
    slip: bool = False,
) -> EvidenceVerdict:
    """The rule on gathered candidates (the precondition on the user's SQL is the caller's).

    `unanimous` (after a pool): that many votes or more, with no vote for another result,
    need no anchor, when they also outnumber the `failed` votes (candidates of the run that
    fail, not refused). `slip`: the user's SQL runs, so the model's candidates alone need
    `SLIP_AGREEMENT` votes."""
    ranked = Counter(e.fingerprint for e in usable(evidence) if e.fingerprint).most_common()
    if not ranked or ranked[0][1] < needed:
        most = ranked[0][1] if ranked else 0
        why = f"no agreement: {most} candidate(s) return the largest result that may be accepted"
        if any(e.refusal or e.unnamed for e in evidence):
            why += f" (refused: {_refusals(evidence)})"
        return EvidenceVerdict(accepted=False, reason=f"{why}; at least {needed} needed")
    fingerprint, count = ranked[0]
    if len(ranked) > 1 and ranked[1][1] == count:
        return EvidenceVerdict(
            accepted=False, reason=f"a tie: two results have {count} candidates each"
        )
    alone = (
        unanimous is not None
        and count > failed
        and _unanimous(evidence, fingerprint, count, unanimous)
    )
    if fingerprint not in anchors(evidence) and not alone:
        return EvidenceVerdict(
            accepted=False,
            fingerprint=fingerprint,
            reason=f"{count} samples agree, but neither the raw rewrite nor the rule repair "
            "returns their result",
        )
    decided = _checked(
        evidence,
        fingerprint,
        count,
        question=question,
        generated=generated,
        named=named,
    )
    short = slip and count < SLIP_AGREEMENT and not _rule_agrees(evidence, fingerprint)
    if decided.accepted and short:
        return decided.model_copy(
            update={
                "accepted": False,
                "reason": f"{count} candidates agree, but the user's SQL runs: without a "
                f"rule's repair among them, the model's candidates need {SLIP_AGREEMENT}",
            }
        )
    return decided


def _checked(
    evidence: list[Evidence],
    fingerprint: str,
    count: int,
    *,
    question: str,
    generated: bool,
    named: NamedNames | None,
) -> EvidenceVerdict:
    """The agreeing result against the result checks, the names check and, in text-to-SQL
    mode, the witness."""
    agreeing = [e for e in evidence if e.fingerprint == fingerprint]
    shape = shape_checks(question, agreeing[0].result)
    checks = list(shape)
    if named is not None and (named.names or named.aggregates):
        checks.append(named.check(e.sql for e in agreeing))
    bad = failed(checks)
    if bad:
        return EvidenceVerdict(
            accepted=False,
            fingerprint=fingerprint,
            checks=checks,
            reason=f"{count} candidates agree, but a result check fails: {describe(bad)}",
        )
    missing = unwitnessed(generated, any(is_witness(e.origin) for e in agreeing))
    if missing is not None:
        return EvidenceVerdict(
            accepted=False,
            fingerprint=fingerprint,
            checks=checks,
            reason=f"{count} candidates agree, but {missing}",
        )
    if generated and not passed(shape):  # the names check guards; it is no evidence
        return EvidenceVerdict(
            accepted=False,
            fingerprint=fingerprint,
            checks=checks,
            reason=f"{count} candidates agree, but no shape check passes ({describe(shape)})",
        )
    return EvidenceVerdict(
        accepted=True,
        fingerprint=fingerprint,
        checks=checks,
        reason=f"{count} of {len(evidence)} independent candidates return the same result "
        f"({describe(checks)})",
    )


def is_lexical(origin: str) -> bool:
    """Whether a candidate's origin is a rule repair of the user's SQL made by lexical rules
    alone (``rule:keyword_typo+unknown_identifier``; not ``raw:rule:...``)."""
    names = _repair_rules(origin)
    return bool(names) and all(name in LEXICAL_RULES for name in names)


def is_certain(origin: str) -> bool:
    """Whether a candidate's origin is a rule repair of the user's SQL made by certain rules,
    with lexical ones or alone (``rule:keyword_typo+equals_null``), at least one certain."""
    names = _repair_rules(origin)
    return any(name in CERTAIN_RULES for name in names) and all(
        name in LEXICAL_RULES | CERTAIN_RULES for name in names
    )


def _repair_rules(origin: str) -> list[str]:
    if not origin.startswith(RULE_ORIGIN):
        return []
    return origin.removeprefix(RULE_ORIGIN).split("+")


def repair_verdict(
    repair: Evidence, *, question: str, named: NamedNames | None, rule: str = LEXICAL_RULE
) -> EvidenceVerdict:
    """`LEXICAL_RULE` (or `CERTAIN_RULE`) on the rule chain's repair of the user's SQL (that
    the SQL may be repaired and what made the repair, `is_lexical` or `is_certain`, are the
    caller's): accepted when it has a result that may be accepted (`usable`: not the user's
    rows) and the result checks and the names check let it stand."""
    kind = "lexical" if rule == LEXICAL_RULE else "certain"
    if not usable([repair]) or repair.fingerprint is None:
        why = repair.refusal or repair.unnamed or "it returns no result set"
        return EvidenceVerdict(accepted=False, reason=f"the {kind} repair may not stand: {why}")
    decided = _checked(
        [repair], repair.fingerprint, 1, question=question, generated=False, named=named
    )
    if not decided.accepted:  # correction mode: only a check can fail
        why = f"a result check fails: {describe(failed(decided.checks))}"
        return decided.model_copy(update={"reason": f"the {kind} repair may not stand: {why}"})
    rules = repair.origin.removeprefix(RULE_ORIGIN)
    what = (
        f"the user's SQL fails and {rules} repairs how it is written"
        if kind == "lexical"
        else f"{rules} repairs what the user's SQL cannot mean as written"
    )
    return decided.model_copy(update={"reason": f"{what} ({describe(decided.checks)})"})


def may_accept(task: TaskContext, trust: TrustContext) -> bool:
    """The rule's precondition: the user's SQL fails, or the issue says its rows are wrong
    (text-to-SQL mode: always)."""
    if trust.generated:
        return True
    original = task.original_result
    if original is None:
        return False
    return not original.ok or not trust.same_rows_expected


def _rule_agrees(evidence: Sequence[Evidence], fingerprint: str) -> bool:
    """Whether a rule's repair of the user's SQL (not of a model's reply) returns the result."""
    return any(
        e.origin.startswith(RULE_ORIGIN) and e.fingerprint == fingerprint for e in usable(evidence)
    )


def _unanimous(evidence: Sequence[Evidence], fingerprint: str, count: int, least: int) -> bool:
    """`least` votes or more for the result, from two statements or more, none against."""
    statements = {e.sql for e in usable(evidence) if e.fingerprint == fingerprint}
    return count >= least and len(statements) >= 2 and not _dissent(evidence, fingerprint)


def _dissent(evidence: Sequence[Evidence], fingerprint: str) -> bool:
    """Whether some candidate with a vote, or whose rows only the judge rejected, returns
    another result."""
    return any(
        e.fingerprint != fingerprint
        for e in evidence
        if e.fingerprint
        and e.result.columns
        and e.unnamed is None
        and (e.refusal is None or e.rejected)
    )


def _refusals(evidence: list[Evidence]) -> str:
    return "; ".join(sorted({r for e in evidence for r in (e.refusal, e.unnamed) if r}))
