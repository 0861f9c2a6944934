"""The trust rules applied to methods without a judge (`raw`, `critic`, `dac`, `maplerepair`).

These methods count a candidate that runs as accepted. Before this gate, a
raw rewrite that handed back the user's own SQL, or SQL returning exactly the
user's rows, came back `accepted: true`, and users act on that flag. The gate
applies the same refusals as the tree search (:mod:`acts_sql.engine.trust`)
to the method's accepted candidate: a refused one is still returned (the
methods' output, and so their benchmark scores, do not change), with
`accepted: false`, a stop reason that says why, and a `refusal` event.
`vote` applies the rules itself, before counting votes
(:mod:`acts_sql.engine.methods.vote`).
"""

from __future__ import annotations

from acts_sql.engine.search import SearchOutcome
from acts_sql.engine.trace import Trace
from acts_sql.engine.trust import TrustContext, emit_refusal


def vouched(outcome: SearchOutcome, trust: TrustContext, trace: Trace) -> SearchOutcome:
    """`outcome` with its acceptance withdrawn when the trust rules refuse the candidate."""
    candidate = outcome.accepted
    if candidate is None:
        return outcome
    refusal = trust.refusal(candidate.sql, candidate.shape)
    if refusal is None:
        return outcome
    candidate.verdict, candidate.reason, candidate.judge = "refused", refusal, None
    emit_refusal(trace, candidate.node, candidate)
    return outcome.model_copy(
        update={"accepted": None, "best": candidate, "stop_reason": f"refused: {refusal}"}
    )
