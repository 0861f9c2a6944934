"""The `vote` method: plain self-consistency, the simple baseline the tree must beat.

The raw prompt K times (the greedy answer, then samples at the pool's temperature with
their own seeds), every distinct answer executed, answers
grouped by their result, and the largest group among those that run and
are not refused by the trust rules wins (a tie goes to the group seen first,
which holds the greedy answer if it runs); refused samples cast no vote. A
sample that repeats an earlier one is a vote, not a new execution. The
winner is accepted only when at least `min_agreement` votes agree on it (2
for K > 1) and, unless `min_agreement` is 1, they are a majority of the K
samples: a sample that fails, repeats the user's SQL or its rows, or holds
no SQL counts against the winner. A lone answer among K, a tie, or a
plurality such as 3 of 8 is returned with `accepted: false`. (With the 0.5B
on 16 development tasks and K = 8, vote accepted 3 answers, all wrong, when
a majority of the votes for results that run was enough: 3 of 8 samples (3
of the 4 that ran), 3 of 8 (3 of 3) and 2 of 8 (2 of 4). Six strong LLMs'
published answers as the samples of 40 tasks: 21 accepted, 6 wrong, under
that rule; 14 accepted, 2 wrong, under this one; `scripts/strong_answers.py`.)
With ``--parallel``, the samples' requests are sent ahead while the greedy
answer is written (`acts_sql.engine.prefetch`).
"""

from __future__ import annotations

from functools import partial

from acts_sql.agent.single_call import raw_correction
from acts_sql.engine.candidates import Candidate, CandidateBook
from acts_sql.engine.events import CandidateData, CandidateMissingData, VoteData
from acts_sql.engine.fingerprint import result_shape
from acts_sql.engine.methods.base import MethodRun
from acts_sql.engine.prefetch import first_request
from acts_sql.engine.recording import TracedExecutor, TracedLLM
from acts_sql.engine.search import SearchOutcome
from acts_sql.engine.trace import Trace
from acts_sql.engine.translation import in_task_language
from acts_sql.engine.trust import TrustContext, emit_refusal
from acts_sql.prompts.context import TaskContext
from acts_sql.tools.base import PoolSettings


def _send_samples_ahead(llm: TracedLLM, task: TaskContext, pool: PoolSettings) -> None:
    """The samples' requests (k = 1 .. K-1), sent while the greedy answer is written."""
    if llm.parallel <= 1:
        return
    samples = (
        partial(raw_correction, task=task, temperature=pool.temperature, seed=k)
        for k in range(1, pool.size)
    )
    llm.send_ahead([r for build in samples if (r := first_request(build, llm.name)) is not None])


def run(r: MethodRun) -> SearchOutcome:
    """Self-consistency over the raw prompt (see the module doc); the winning group is
    accepted only when enough trusted votes agree on it (`agreement_needed`)."""
    executor, llm, task, trace, pool = r.executor, r.llm, r.task, r.trace, r.pool
    book = CandidateBook(task.dialect)
    statements_of: dict[str, list[str]] = {}
    traced = TracedExecutor(executor, trace, "vote", "candidate", budget=llm.budget)
    _send_samples_ahead(llm, task, pool)
    for k in range(pool.size):
        temperature = 0.0 if k == 0 else pool.temperature
        statements, _ = raw_correction(
            llm.for_node("vote"), task, temperature=temperature, seed=k if k else None
        )
        origin = "greedy" if k == 0 else "sample"
        if not statements:
            trace.emit(CandidateMissingData(origin=origin), node="vote", summary="no ```sql block")
            continue
        sql = ";\n".join(statements)
        if task.language is not None:  # one query, maybe written in SQL (see `raw`)
            sql = in_task_language(sql, executor, trace, "vote", llm.budget)
            statements = [sql]
        _cast_vote(book, traced, trace, r.trust, sql, statements, origin, statements_of)
    needed = r.options.agreement_needed(pool.size)
    return _vote_outcome(book, trace, pool, needed, statements_of)


def _cast_vote(
    book: CandidateBook,
    run: TracedExecutor,
    trace: Trace,
    trust: TrustContext,
    sql: str,
    statements: list[str],
    origin: str,
    statements_of: dict[str, list[str]],
) -> None:
    """One sample into the book: a vote for a SQL seen before, else a new candidate, executed
    and refused when the trust rules say so; the trace gets its `candidate` event."""
    known = book.known(sql)
    if known is not None:
        book.add_vote(known)
        candidate = known
    else:
        result = run.execute(sql)
        shape = result_shape(sql, result, book.dialect)
        candidate = book.add("vote", sql, result, shape, origin=origin)
        statements_of[candidate.id] = statements
        refusal = trust.refusal(sql, shape) if candidate.runs else None
        if refusal:
            book.refuse(candidate, refusal)
    trace.emit(
        CandidateData(
            sql=candidate.sql,
            status=candidate.result.status,
            statements=statements_of.get(candidate.id),
            candidate=candidate.id,
            origin=origin,
            duplicate=known is not None,
            group=candidate.group,
            verdict=candidate.verdict,
        ),
        node="vote",
        summary=f"repeats {candidate.id}" if known else candidate.result.summary(max_rows=3),
    )
    if known is None and candidate.verdict == "refused":
        emit_refusal(trace, "vote", candidate)


def _vote_outcome(
    book: CandidateBook,
    trace: Trace,
    pool: PoolSettings,
    needed: int,
    statements_of: dict[str, list[str]],
) -> SearchOutcome:
    """The count: the largest trusted group wins, accepted when at least `needed` votes and
    (with `needed` > 1) more than half of the samples agree on it."""
    winner = _majority(book)
    groups = [g.model_dump() for g in book.groups.values()]
    if winner is None:
        best = book.best()
        return SearchOutcome(
            best=best,
            stop_reason=_no_majority(book),
            statements=statements_of.get(best.id) if best else None,
            candidates=list(book.candidates),
            groups=groups,
        )
    votes = book.support(winner.group)
    trace.emit(VoteData(winner=winner.id), node="vote", summary=f"{votes} of {pool.size} agree")
    cast = sum(book.support(g.id) for g in book.groups.values())
    if votes < needed:
        why = (
            f"no agreement: the largest group of results that run has {votes} of "
            f"{pool.size} samples (at least {needed} must agree)"
        )
    elif needed > 1 and 2 * votes <= pool.size:  # `min_agreement=1`: any one answer may stand
        why = (
            f"no majority: the largest group of results that run has {votes} of the "
            f"{pool.size} samples ({cast} cast for results that run; more than half of "
            "the samples must agree)"
        )
    else:
        book.accept(winner, "the largest group of results that run")
        return SearchOutcome(
            accepted=winner,
            best=winner,
            stop_reason=(
                f"accepted by majority vote ({votes} of {pool.size} samples agree, {votes} of "
                f"the {cast} votes for results that run)"
            ),
            statements=statements_of.get(winner.id),
            candidates=list(book.candidates),
            groups=groups,
        )
    return SearchOutcome(
        best=winner,
        stop_reason=why,
        statements=statements_of.get(winner.id),
        candidates=list(book.candidates),
        groups=groups,
    )


def _majority(book: CandidateBook) -> Candidate | None:
    """The representative of the group with the most trusted votes (None: no such group)."""
    running = [g for g in book.groups.values() if book.support(g.id) > 0]
    if not running:
        return None
    largest = max(running, key=lambda g: book.support(g.id))  # first on a tie
    trusted = [c for c in book.members(largest.id) if c.verdict != "refused"]
    return max(trusted, key=lambda c: (c.votes, -c.order))


def _no_majority(book: CandidateBook) -> str:
    refused = [c for c in book.candidates if c.verdict == "refused"]
    if refused:
        reasons = "; ".join(sorted({c.reason for c in refused}))
        return f"refused: every sample that runs ({reasons})"
    if book.candidates:
        return "no sample runs"
    return "no ```sql block in any reply"
