"""The independent witness of text-to-SQL mode: what an acceptance there must rest on.

In text-to-SQL mode the first query is the model's own answer to the question, and every
later candidate is written with that query in view: a raw rewrite, a raw sample, the
samples of a pool, and the judge that compares them. Candidates that agree with each other
there repeat one line of thought rather than confirm it, and a small judge vouches for
almost anything. So a result is accepted there (by the evidence gate or by the judge) only
when the **witness** returns it: one more generation from the question and the schema
alone, at the pool's temperature, that has not seen the first query (drawn once a run by
the evidence gate, `acts_sql.engine.evidence`; origin `witness`). Two generations that
agree without seeing each other is the issue's "agreement between independent
generations"; the result checks must still not fail, and the gate's other conditions still
hold.

Without a witness (the pool's temperature is 0, so it would be the first query again; the
gate did not run; no call was left; it wrote nothing that runs) nothing is accepted in
text-to-SQL mode. A result the witness does not return stays ranked: it may be returned,
never as accepted. The witness is also a candidate like any other: it joins the first pool.
In correction mode (the user gave SQL) none of this applies: the user's SQL and rows are
refused instead (`acts_sql.engine.trust`).
"""

from __future__ import annotations

WITNESS_ORIGIN = "witness"

UNWITNESSED = (
    "no independent generation from the question alone returns it (in text-to-SQL mode the "
    "other candidates are written with the model's first query in view, and agree with it "
    "rather than confirm it)"
)


def is_witness(origin: str) -> bool:
    """Whether a candidate's origin is the witness (`witness`, or `witness:from_sql` when its
    SQL was rewritten into the task's query language)."""
    return origin == WITNESS_ORIGIN or origin.startswith(WITNESS_ORIGIN + ":")


def unwitnessed(generated: bool, witnessed: bool) -> str | None:
    """Why a result may not be accepted for want of the witness, or None: in text-to-SQL mode
    (`generated`) when the witness does not return it (`witnessed`)."""
    return UNWITNESSED if generated and not witnessed else None
