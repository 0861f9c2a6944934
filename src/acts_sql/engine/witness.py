"""The independent witness of text-to-SQL mode: may the first query's own result be accepted?

In text-to-SQL mode the first query is the model's own answer to the question, and every
later candidate is written with that query in view: a raw rewrite, a sample of a pool or a
judge that returns or vouches for its result repeats it rather than confirms it. So the
first query's result is accepted (by the evidence gate or by the judge) only when the
**witness** returns it too: one more generation from the question and the schema alone, at
the pool's temperature, that has not seen the first query (drawn once a run by the evidence
gate, `acts_sql.engine.evidence`; origin `witness`). Two generations that agree without
seeing each other is the issue's "agreement between independent generations".

Without a witness (the pool's temperature is 0, so it would be the first query again; the
gate did not run; no call was left) nothing confirms the first query's result and it is not
accepted; it stays ranked and may be returned, not accepted. Any other result is judged as
before. The witness is also a candidate like any other: it joins the first pool.
"""

from __future__ import annotations

WITNESS_ORIGIN = "witness"


def is_witness(origin: str) -> bool:
    """Whether a candidate's origin is the witness (`witness`, or `witness:from_sql` when its
    SQL was rewritten into the task's query language)."""
    return origin == WITNESS_ORIGIN or origin.startswith(WITNESS_ORIGIN + ":")


def echo_fault(fingerprint: str | None, first: str | None, witnessed: bool) -> str | None:
    """Why accepting the result `fingerprint` would rest on the first query alone, or None.

    `first`: the first query's result fingerprint (text-to-SQL mode; None otherwise);
    `witnessed`: whether the witness returns `fingerprint`."""
    if first is None or fingerprint != first or witnessed:
        return None
    return (
        "it is the first query's own result, and no independent generation from the question "
        "alone returns it (in text-to-SQL mode the first query is the model's own, and "
        "candidates written with it in view repeat it rather than confirm it)"
    )
