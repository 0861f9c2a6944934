"""Candidate pools: several candidates per node, executed and handed to the engine.

A node that writes SQL (`generate_sql`, the repair step of `split_fix_syntax`)
produces a pool of up to `PoolSettings.size` LLM candidates:

1. the greedy answer (temperature 0). When it repeats a SQL the run already
   rejected or saw fail (the user's own SQL counts as rejected from the
   start), it is asked again once, with that SQL and why it was dropped shown
   as one not to repeat, and a higher temperature;
2. samples at `PoolSettings.temperature`, each with its own seed (a local
   model reuses the cached prompt: only the reply is new work); once a draw
   has repeated a rejected or failing SQL (of the run, or of this pool), the
   later draws are told not to repeat it. Once `PoolSettings.stop_after_repeats`
   draws have repeated such a SQL, the pool draws no more: the model's
   distribution is peaked there (a small model at temperature 0.8 writes the
   same 300-token statement five times over, since sampling truncates to the
   likeliest tokens before the temperature applies), and each further draw
   would most likely be one more paid repeat. The calls saved go to the
   search's next node;
3. deterministic candidates for every distinct LLM candidate that fails to
   run: the syntax-stage repairs of the rule chain (:mod:`acts_sql.sql.rules`,
   origin ``rule:<name>``), such as unknown tables and columns replaced by the
   schema's nearest names, functions of another dialect rewritten, the
   statement re-read by sqlglot or transpiled from a dialect it seems written in.

For a query language other than SQL (PRQL), a candidate the model wrote in SQL
instead is kept as its rewrite in the language when the language can rewrite it
and the rewrite returns the SQL's rows (origin ``<origin>:from_sql``).

A reason the engine gave for dropping an earlier SQL that the model copied into its
answer ("... ORDER BY id (it fails: syntax error ...)") is cut from it first
(`strip_echoed_reasons`). Identical SQL texts (after ``normalize_sql``) are one
candidate with several votes. A SQL the run already executed (``CandidateMemory``) is not executed
again: its earlier result is reused. New statements run in a background
thread while the next sample is written, so execution overlaps generation.
With ``--parallel`` (an endpoint that serves parallel requests), the samples'
requests are sent ahead while the greedy answer is written
(:mod:`acts_sql.engine.prefetch`); the pool still reads the replies in order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass

from acts_sql.db.language import translate_sql
from acts_sql.db.result import ExecResult
from acts_sql.llm.base import SendsAhead
from acts_sql.sql.query_text import normalize_sql
from acts_sql.tools.base import CandidateMemory, PoolEntry, PoolSettings, ToolEnv
from acts_sql.tools.rule_chain import RuleChain

MAX_RULE_CANDIDATES = 4
FAILED_WAIT_S = 0.5
"""How long a draw waits for the pool's running executions to know which SQL failed."""
FROM_SQL = "from_sql"
"""Origin suffix of a candidate the model wrote in SQL where a query language was asked for,
kept in that language (`acts_sql.db.language.translate_sql`): ``greedy:from_sql``."""
RETRY_TEMPERATURE = 1.0


Ask = Callable[[float, int, str, Sequence[str]], str | None]
"""One LLM call: (temperature, seed, note, SQL not to write again) -> SQL, or None when the
reply was unusable. The last is the request's ``avoid`` (`acts_sql.llm.base.AvoidValues`):
a local model is steered away from writing them again."""


def repairable(result: ExecResult) -> bool:
    """A failure a repair may fix: an error, a timeout, or a statement blocked only
    because it could not be parsed (the guard's "cannot be checked: ... syntax error")."""
    if result.status in ("error", "timeout"):
        return True
    return result.status == "blocked" and "syntax error" in (result.error or "").lower()


def clean_sql(sql: str) -> str:
    return sql.strip().rstrip(";").strip()


@dataclass
class _Pending:
    sql: str
    origin: str
    outcome: Future[ExecResult] | ExecResult
    known: bool
    votes: int = 1


class _Collector:
    """Distinct SQL texts of one pool, in order, with votes and pending executions."""

    def __init__(
        self, env: ToolEnv, memory: CandidateMemory | None, skip: set[str] | None = None
    ) -> None:
        self.env = env
        self.memory = memory
        self.pending: list[_Pending] = []
        self._index: dict[str, _Pending] = {}
        self._skip = skip or set()
        self._runner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="candidate")

    def add(self, sql: str, origin: str) -> bool:
        """Add a candidate; False when it repeats one already seen (a vote, if in this pool)."""
        sql = clean_sql(sql)
        if not sql:
            return False
        translated = translate_sql(self.env.executor, sql)
        if translated is not None:  # SQL where the task's query language was asked for
            sql, origin = translated.query, f"{origin}:{FROM_SQL}"
        key = normalize_sql(sql, self.env.task.dialect)
        if key in self._skip:
            return False
        if key in self._index:
            self._index[key].votes += 1
            return False
        earlier = self.memory.known_result(sql) if self.memory else None
        outcome: Future[ExecResult] | ExecResult
        if earlier is not None:
            outcome = earlier
        else:
            outcome = self._runner.submit(self.env.executor.execute, sql)
        item = _Pending(sql=sql, origin=origin, outcome=outcome, known=earlier is not None)
        self._index[key] = item
        self.pending.append(item)
        return True

    def finish(self) -> list[PoolEntry]:
        """Wait for the executions; the entries in the order they were first written."""
        try:
            return [
                PoolEntry(
                    sql=p.sql,
                    origin=p.origin,
                    votes=p.votes,
                    result=p.outcome.result() if isinstance(p.outcome, Future) else p.outcome,
                    known=p.known,
                )
                for p in self.pending
            ]
        finally:
            self.close()

    def failure(self, sql: str) -> str | None:
        """Why the candidate of this pool with this text failed (waiting for its execution,
        which the pool waits for anyway); None when it ran or is not in the pool."""
        item = self._index.get(normalize_sql(clean_sql(sql), self.env.task.dialect))
        if item is None:
            return None
        outcome = item.outcome
        if isinstance(outcome, Future):
            if outcome.exception() is not None:
                return None  # raised again, and reported, by finish()
            outcome = outcome.result()
        return None if outcome.ok else failure_reason(outcome)

    def failed(self, wait_s: float = FAILED_WAIT_S) -> list[str]:
        """The texts of this pool whose execution failed; one still running is waited for
        up to `wait_s` in all, then left out (a slow statement does not hold the draws up)."""
        running = [p.outcome for p in self.pending if isinstance(p.outcome, Future)]
        if running:
            wait(running, timeout=wait_s)
        done = [
            (p.sql, p.outcome.result() if isinstance(p.outcome, Future) else p.outcome)
            for p in self.pending
            if not isinstance(p.outcome, Future) or (p.outcome.done() and not p.outcome.exception())
        ]
        return [sql for sql, result in done if not result.ok]

    def close(self) -> None:
        self._runner.shutdown(wait=True, cancel_futures=True)


FAILURE_CHARS = 200
"""How much of an error a "do not repeat" note quotes."""


def failure_reason(result: ExecResult) -> str:
    """A failing result as a reason not to repeat its SQL: the first line of the error."""
    first = (result.failure().splitlines() or [""])[0].strip()
    if len(first) > FAILURE_CHARS:
        first = first[: FAILURE_CHARS - 3] + "..."
    return f"it fails: {first}"


class _Avoid:
    """The rejected or failing SQL a pool has run into, as a note for its next draws."""

    def __init__(self, memory: CandidateMemory | None, pool: _Collector) -> None:
        self.memory = memory
        self.pool = pool
        self.seen: dict[str, str] = {}

    def learn(self, sql: str) -> bool:
        """Whether `sql` repeats a SQL the run rejected or saw fail, or one of this pool
        that failed (then later draws are told not to write it again)."""
        reason = self.memory.rejection(sql) if self.memory is not None else None
        if reason is None:
            reason = self.pool.failure(sql)
        if reason is None:
            return False
        self.seen.setdefault(" ".join(clean_sql(sql).split()), reason)
        return True

    def note(self) -> str:
        """The dropped SQL, each with why on a line of its own: written on the SQL's line,
        as "SQL (why)", the 0.5B copied the reason into its next SQL."""
        if not self.seen:
            return ""
        listed = "\n".join(f"- dropped because {why}:\n  {sql}" for sql, why in self.seen.items())
        return (
            "Do not repeat these SQL statements; they were already tried and dropped:\n"
            f"{listed}\nWrite a different correction."
        )

    def texts(self) -> list[str]:
        """Every SQL a draw should not write again: the run's dropped ones, and this pool's
        that failed or repeated a dropped one."""
        dropped = self.memory.dropped() if self.memory is not None else []
        return list(dict.fromkeys([*dropped, *self.pool.failed(), *self.seen]))

    def clean(self, sql: str | None) -> str | None:
        """`sql` without the engine's reasons the model copied into it."""
        if sql is None:
            return None
        shown = [*self.seen.values(), *(self.memory.reasons() if self.memory else [])]
        return strip_echoed_reasons(sql, shown)


ECHO_MIN_CHARS = 12
"""How much of a reason a copy must repeat, from its start, to count as one."""


def strip_echoed_reasons(sql: str, reasons: list[str]) -> str:
    """`sql` without the copies of `reasons` a model wrote into it, as ``(reason)``.

    The prompts show why earlier SQL was dropped ("it fails: ...", "returns exactly the rows
    of the user's SQL ..."), and a small model copies that text after its SQL: in an acts
    run with the 0.5B on 16 tasks, 11 replies did and 9 distinct candidates held a copy; such
    a copy fails as a syntax error, which then costs a repair step. A whole copy is removed
    wherever it is; a copy cut short (at least `ECHO_MIN_CHARS` of the reason) is removed
    when it runs to the end of the text."""
    distinct = {r.strip() for r in reasons if len(r.strip()) >= ECHO_MIN_CHARS}
    for reason in sorted(distinct, key=len, reverse=True):
        whole = f"({reason})"
        while whole in sql:
            at = sql.index(whole)
            sql = sql[:at].rstrip() + sql[at + len(whole) :]
        at = sql.find("(" + reason[:ECHO_MIN_CHARS])
        if at != -1 and whole.startswith(sql[at:].rstrip()):
            sql = sql[:at]
    return clean_sql(sql)


def collect_pool(
    env: ToolEnv,
    ask: Ask,
    settings: PoolSettings,
    memory: CandidateMemory | None = None,
    *,
    stops: list[str] | None = None,
) -> list[PoolEntry]:
    """Write, deduplicate and execute one node's candidates (see the module doc).

    When the pool stops drawing early, why is appended to `stops`."""
    pool = _Collector(env, memory)
    avoid = _Avoid(memory, pool)
    _send_samples_ahead(env, ask, settings)
    repeats = 0
    try:
        greedy = avoid.clean(ask(0.0, 0, "", avoid.texts()))
        if greedy is not None and avoid.learn(greedy):
            repeats += 1
            retry_temperature = max(settings.temperature, RETRY_TEMPERATURE)
            retry = avoid.clean(ask(retry_temperature, 0, avoid.note(), avoid.texts()))
            if retry is not None:
                repeats += avoid.learn(retry)
                pool.add(retry, "retry")
        if greedy is not None:
            pool.add(greedy, "greedy")
        for seed in range(1, settings.size):
            if settings.stop_after_repeats and repeats >= settings.stop_after_repeats:
                if stops is not None:
                    stops.append(
                        f"stopped drawing with {settings.size - seed} of {settings.size} "
                        f"draw(s) left: {repeats} repeated a SQL already rejected or failing"
                    )
                break
            sample = avoid.clean(ask(settings.temperature, seed, avoid.note(), avoid.texts()))
            if sample is not None:
                repeats += avoid.learn(sample)
                pool.add(sample, "sample")
        entries = pool.finish()
    except BaseException:
        pool.close()
        raise
    if settings.rules:
        entries += rule_candidates(env, entries, memory)
    return entries


def _send_samples_ahead(env: ToolEnv, ask: Ask, settings: PoolSettings) -> None:
    """With ``--parallel``: the samples' requests, sent while the greedy answer is written
    (as they are when no draw repeats a rejected SQL; otherwise they go unused)."""
    preview = getattr(ask, "preview", None)
    if settings.size < 2 or preview is None or not isinstance(env.llm, SendsAhead):
        return
    texts = env.memory.dropped() if env.memory is not None else []
    draws = [(0.0, ""), *[(settings.temperature, "")] * (settings.size - 1)]
    env.llm.send_ahead(preview(draws, texts)[1:])


def rule_candidates(
    env: ToolEnv,
    entries: list[PoolEntry],
    memory: CandidateMemory | None,
    *,
    limit: int = MAX_RULE_CANDIDATES,
) -> list[PoolEntry]:
    """Deterministic repairs of the failing candidates of a pool, executed."""
    dialect = env.task.dialect
    pool = _Collector(env, memory, skip={normalize_sql(e.sql, dialect) for e in entries})
    added = 0
    try:
        for entry in entries:
            if not repairable(entry.result) or added >= limit:
                continue
            for origin, sql in repairs_of(entry.sql, entry.result, env):
                if added >= limit:
                    break
                added += pool.add(sql, origin)
        return pool.finish()
    except BaseException:
        pool.close()
        raise


def repairs_of(sql: str, result: ExecResult, env: ToolEnv) -> list[tuple[str, str]]:
    """(origin, sql) of the deterministic repairs of one failing statement: each
    syntax-stage rule's, unexecuted (the pool executes them)."""
    chain = RuleChain(
        env.executor, env.task.facts(), env.task.dialect, reference_sql=env.task.original_sql
    )
    return chain.alternatives(sql, result)
