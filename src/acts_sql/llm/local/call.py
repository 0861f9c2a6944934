"""One completion on a loaded model: the prompt, its limits, and the two ways to decode it.

:class:`LoadedModel` holds one llama.cpp model and context with the lock that
serializes its use. :meth:`LoadedModel.run` renders and tokenizes the
request, then decodes it one of three ways:

- greedy requests of the purposes that copy their prompt
  (:data:`PROMPT_LOOKUP_PURPOSES`) go to the project's decoder
  (:func:`~acts_sql.llm.local.decoder.decode_greedy`) with prompt lookup;
- samples (a temperature above 0) to the same decoder without lookup, each
  token drawn by :class:`~acts_sql.llm.local.sampling.SampleChooser`
  (``ACTS_SQL_SAMPLER=llama-cpp`` sends them to llama-cpp-python's loop, as
  before);
- everything else (the other purposes, ``ACTS_SQL_PROMPT_LOOKUP=0``)
  to llama-cpp-python's ``create_completion``.

The project's decoder also honours the request's ``avoid``: a reply whose SQL
repeats one the run dropped is forked away from it
(:mod:`~acts_sql.llm.local.steering`); and its ``sql_names``: the reply's SQL may
only name the schema's tables and columns and its own aliases
(:mod:`~acts_sql.llm.local.constraint`; such a greedy request goes to the
project's decoder even without prompt lookup).

Both write greedy tokens by the same rules. With llama.cpp built without
llamafile's kernels (what `scripts/demo.sh` installs) a position's logits in a
verification batch are those of the position alone, so prompt lookup writes the
same tokens; with a default build they differ slightly and prompt lookup is off
unless asked for (``LocalBackend``). A reply also depends on what the KV cache
held before it, as between a cold and a cached prompt (docs/BENCHMARKS.md,
"Prompt lookup"). The llama.cpp specifics beyond the ``Llama`` object are small
methods, so tests can stand in a fake model.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acts_sql.errors import LLMError
from acts_sql.llm.base import LLMRequest
from acts_sql.llm.local.constraint import ConstrainedGreedy, ConstrainedSample, NameGuard
from acts_sql.llm.local.decoder import Argmax, DecodeStats, Transcript, decode_greedy
from acts_sql.llm.local.grammar import GrammarCache
from acts_sql.llm.local.guards import DeadlineGuard, RepetitionGuard, Stops
from acts_sql.llm.local.lookup import DraftGate, DraftLength, NgramDrafter
from acts_sql.llm.local.prompt_eval import PromptDeadline, deadline_error, reused_prefix
from acts_sql.llm.local.sampling import SampleChooser
from acts_sql.llm.local.sqlnames import NameRules
from acts_sql.llm.local.steering import RecordingChooser, Steering, ValueWatch, fork_point
from acts_sql.llm.local.threads import ThreadGovernor
from acts_sql.llm.sql_fences import BlocksClosed

FORK_SEED_STEP = 7919
"""A sample forked away from a repeated value draws on with its seed plus this (per fork)."""
PROMPT_LOOKUP_PURPOSES = frozenset({"generate_sql", "fix_syntax", "decompose", "correct"})
"""Purposes whose greedy answer copies the prompt (the user's SQL, with edits)."""


class LocalContextError(LLMError):
    """A prompt that does not fit the model's context window."""


ALL_PURPOSES = "all"
STOCK_SAMPLER = "llama-cpp"


def project_sampler_enabled() -> bool:
    """ACTS_SQL_SAMPLER: samples are drawn by the project's decoder unless it is
    ``llama-cpp`` (llama-cpp-python's own loop, what ran before)."""
    return os.environ.get("ACTS_SQL_SAMPLER", "").strip().lower() != STOCK_SAMPLER


def prompt_lookup_enabled() -> bool | None:
    """ACTS_SQL_PROMPT_LOOKUP: off when it is ``0`` (or ``off``, ``false``, ``no``), on when
    it is set to anything else, None when it is not set (the backend decides by the build)."""
    raw = os.environ.get("ACTS_SQL_PROMPT_LOOKUP", "").strip().lower()
    if not raw:
        return None
    return raw not in ("0", "off", "false", "no")


def lookup_purposes_from_env() -> frozenset[str] | None:
    """The purposes decoded with prompt lookup: :data:`PROMPT_LOOKUP_PURPOSES`, or
    None (every greedy request) when ACTS_SQL_PROMPT_LOOKUP is ``all``."""
    raw = os.environ.get("ACTS_SQL_PROMPT_LOOKUP", "1").strip().lower()
    return None if raw == ALL_PURPOSES else PROMPT_LOOKUP_PURPOSES


@dataclass(frozen=True)
class CallStats:
    """Where the time of the last call went."""

    prompt_tokens: int
    cached_prompt_tokens: int
    evaluated_prompt_tokens: int
    prompt_seconds: float
    completion_tokens: int
    generation_seconds: float
    """Wall time of the rest of the completion: decoding and sampling."""
    seconds: float
    stopped_by: str
    """``stop`` (end of reply), ``length`` (max_tokens), ``repetition``,
    ``deadline`` (the request's ``timeout_s`` passed: a partial reply) or ``blocks`` (the
    request's ``enough_blocks`` have closed: the rest would be prose)."""
    threads: int
    decoder: str = "llama-cpp-python"
    """``llama-cpp-python`` (its own loop), ``lookup`` (the project's, with prompt lookup),
    ``greedy`` (the project's, without it: a request with ``sql_names`` when lookup is off)
    or ``sampler`` (the project's, drawing at the request's temperature)."""
    drafted_tokens: int = 0
    accepted_tokens: int = 0
    """Draft tokens evaluated, and those greedy decoding confirmed (prompt lookup)."""
    decode_steps: int = 0
    """Model evaluations while writing (the project's decoder only)."""
    steered: int = 0
    """Times the reply was turned away from a value it must not repeat (`.steering`)."""
    constrained: bool = False
    """The reply's SQL was held to the request's ``sql_names`` (`.constraint`)."""
    refused_tokens: int = 0
    """Tokens the name constraint refused."""


@dataclass
class _Call:
    """A request made ready: its prompt tokens, limit and stopping rules."""

    request: LLMRequest
    name: str
    prompt: list[int]
    formatted: Any
    limit: int
    cached: int
    guard: RepetitionGuard
    clock: DeadlineGuard | None
    stops: Stops
    grammar: Any
    deadline: float | None
    started: float
    threads: int
    names: NameRules | None = None
    guards: list[NameGuard] = field(default_factory=list)
    blocks: BlocksClosed | None = None


@dataclass
class _Written:
    text: str
    finish: str
    completion_tokens: int
    evaluated: int
    prompt_seconds: float
    generation_seconds: float
    decode: DecodeStats | None = None
    decoder: str = "llama-cpp-python"
    steered: int = 0


class LoadedModel:
    """One llama.cpp model and context, with the lock that serializes its use."""

    def __init__(
        self,
        llama: Any,
        path: Path,
        load_seconds: float,
        formatter: Callable[..., Any],
        threads: int,
        governor: ThreadGovernor | None = None,
    ) -> None:
        self.llama = llama
        self.path = path
        self.load_seconds = load_seconds
        self.formatter = formatter
        self.threads = threads
        self.governor = governor or ThreadGovernor(threads, threads)
        self.lock = threading.Lock()
        self._grammars = GrammarCache()
        self._gates: dict[int, DraftGate] = {}
        """Prompt lookup's measured step costs, by thread count."""

    def draft_gate(self, threads: int) -> DraftGate:
        """The draft gate of a reply decoded with `threads` threads (costs kept across calls)."""
        gate = self._gates.setdefault(threads, DraftGate())
        gate.new_reply()
        return gate

    # -- llama.cpp specifics (a fake model replaces these) ---------------------------

    def grammar(self, schema: dict[str, Any]) -> Any:
        """The grammar for a JSON schema (generic JSON when it cannot be compiled)."""
        return self._grammars.get(schema)

    def set_threads(self, threads: int) -> None:
        """Use `threads` threads from the next evaluation on."""
        if threads != self.threads:
            from llama_cpp import llama_cpp as low_level

            low_level.llama_set_n_threads(self.llama.ctx, threads, threads)
            self.threads = threads

    def reset_counters(self) -> None:
        from llama_cpp import llama_cpp as low_level

        low_level.llama_perf_context_reset(self.llama.ctx)

    def counters(self) -> tuple[int, float]:
        """Prompt tokens evaluated since the reset, and their seconds (llama.cpp's count)."""
        from llama_cpp import llama_cpp as low_level

        perf = low_level.llama_perf_context(self.llama.ctx)
        return int(perf.n_p_eval), perf.t_p_eval_ms / 1000.0

    def detokenize(self, tokens: Sequence[int]) -> bytes:
        """The bytes of `tokens`."""
        return bytes(self.llama.detokenize(list(tokens)))

    def set_prompt_deadline(self, deadline: float | None) -> None:
        """The deadline the next prompt evaluation checks between its batches (None: none)."""
        self.llama.prompt_deadline = deadline

    def engine(self) -> Any:
        """The evaluation primitives of the project's decoder."""
        from acts_sql.llm.local.engine import LlamaEngine

        return LlamaEngine(self.llama)

    def close(self) -> None:
        self.llama.close()

    # -- one call ---------------------------------------------------------------------

    def run(
        self,
        request: LLMRequest,
        *,
        name: str,
        n_ctx: int,
        seed: int,
        max_tokens: int | None,
        threads: int,
        deadline: float | None = None,
        lookup: bool = False,
        sampler: bool = False,
        adapt_threads: bool = False,
    ) -> tuple[CallStats, str]:
        """One completion with `threads` threads; the caller holds :attr:`lock`.

        `deadline` (``time.perf_counter``; the request's ``timeout_s`` counted
        from when the call began) stops it: LLMDeadlineError before or during
        the prompt, a partial reply (``stopped_by`` ``deadline``) after.
        `lookup`: decode a greedy request with prompt lookup. `sampler`: draw the
        tokens of a request at a temperature above 0 with the project's decoder
        (seeded with `seed`). `adapt_threads`:
        let the governor change the thread count while decoding.
        """
        started = time.perf_counter()
        if deadline is not None and started >= deadline:
            raise deadline_error(
                name,
                request.purpose,
                request.timeout_s or 0.0,
                deadline,
                "before the prompt was evaluated",
            )
        self.set_threads(threads)
        call = self._prepare(request, name, n_ctx, max_tokens, deadline, started, threads)
        try:
            if request.temperature == 0 and (lookup or call.names is not None):
                written = self._run_lookup(call, adapt_threads, drafting=lookup)
            elif sampler and request.temperature > 0:
                written = self._run_sampled(call, seed, adapt_threads)
            else:
                written = self._run_stock(call, seed)
        except PromptDeadline as stop:
            assert deadline is not None
            rest = f"; the rest needed about {stop.needed:.1f} s" if stop.needed else ""
            raise deadline_error(
                name,
                request.purpose,
                request.timeout_s or 0.0,
                deadline,
                f"while evaluating the prompt ({stop.evaluated} of {stop.total} tokens "
                f"evaluated{rest})",
            ) from None
        except (ValueError, RuntimeError) as exc:
            raise LLMError(
                f"{name}: llama.cpp failed on the {request.purpose} request: {exc}",
                purpose=request.purpose,
            ) from None
        return self._stats(call, written), self._text(call, written)

    def _prepare(
        self,
        request: LLMRequest,
        name: str,
        n_ctx: int,
        max_tokens: int | None,
        deadline: float | None,
        started: float,
        threads: int,
    ) -> _Call:
        llama = self.llama
        formatted = self.formatter(
            messages=[{"role": m.role, "content": m.content} for m in request.messages]
        )
        prompt = [
            int(t)
            for t in llama.tokenize(
                formatted.prompt.encode("utf-8"),
                add_bos=not formatted.added_special,
                special=True,
            )
        ]
        room = n_ctx - len(prompt)
        if room < 1:
            raise LocalContextError(
                f"{name}: the {request.purpose} prompt has {len(prompt)} tokens, more than "
                f"the context window of {n_ctx}",
                purpose=request.purpose,
                prompt_tokens=len(prompt),
                n_ctx=n_ctx,
            )
        guard = RepetitionGuard(len(prompt))
        stops = Stops([guard])
        clock = DeadlineGuard(deadline) if deadline is not None else None
        if clock is not None:
            stops.append(clock)
        if formatted.stopping_criteria is not None:
            stops.extend(formatted.stopping_criteria)
        blocks = None
        if request.enough_blocks and not request.json_schema:
            blocks = BlocksClosed(len(prompt), request.enough_blocks, self.detokenize)
            stops.append(blocks)
        return _Call(
            request=request,
            name=name,
            prompt=prompt,
            formatted=formatted,
            limit=min(request.max_tokens, max_tokens or request.max_tokens, room),
            cached=reused_prefix(llama.input_ids[: llama.n_tokens].tolist(), prompt),
            guard=guard,
            clock=clock,
            stops=stops,
            grammar=self.grammar(request.json_schema) if request.json_schema else None,
            deadline=deadline,
            started=started,
            threads=threads,
            names=NameRules(request.sql_names.names) if request.sql_names else None,
            blocks=blocks,
        )

    def _run_stock(self, call: _Call, seed: int) -> _Written:
        """llama-cpp-python's own loop (``create_completion``)."""
        self.reset_counters()
        began = time.perf_counter()
        self.set_prompt_deadline(call.deadline)
        try:
            output = self.llama.create_completion(
                prompt=call.prompt,
                max_tokens=call.limit,
                temperature=call.request.temperature,
                seed=seed,
                stop=call.formatted.stop,
                stopping_criteria=call.stops,
                grammar=call.grammar,
                repeat_penalty=1.0,
            )
        finally:
            self.set_prompt_deadline(None)
        seconds = time.perf_counter() - began
        evaluated, prompt_seconds = self.counters()
        choice = output["choices"][0]
        written = _Written(
            text=choice["text"],
            finish="length" if choice.get("finish_reason") == "length" else "stop",
            completion_tokens=int(output["usage"]["completion_tokens"]),
            evaluated=evaluated,
            prompt_seconds=prompt_seconds,
            generation_seconds=max(0.0, seconds - prompt_seconds),
        )
        if written.completion_tokens >= 8:
            self.governor.step(1, written.generation_seconds / written.completion_tokens)
        return written

    def _run_lookup(self, call: _Call, adapt_threads: bool, drafting: bool = True) -> _Written:
        """The project's greedy decoder, with prompt lookup when `drafting`."""
        engine = self.engine()

        def chooser(attempt: int) -> Any:
            inner = engine.greedy_grammar(call.grammar) if call.grammar is not None else Argmax()
            guard = _guard(call, engine)
            return inner if guard is None else ConstrainedGreedy(inner, guard)

        def drafter() -> NgramDrafter:
            return NgramDrafter(call.prompt)

        make_drafter = drafter if drafting else None
        label = "lookup" if drafting else "greedy"
        return self._run_project(call, engine, chooser, make_drafter, adapt_threads, label)

    def _run_sampled(self, call: _Call, seed: int, adapt_threads: bool) -> _Written:
        """The project's decoder, drawing each token at the request's temperature."""
        engine = self.engine()

        def chooser(attempt: int) -> Any:
            grammar = engine.grammar_check(call.grammar) if call.grammar is not None else None
            inner = SampleChooser(
                call.request.temperature, seed + attempt * FORK_SEED_STEP, grammar
            )
            guard = _guard(call, engine)
            return inner if guard is None else ConstrainedSample(inner, guard)

        return self._run_project(call, engine, chooser, None, adapt_threads, "sampler")

    def _run_project(
        self,
        call: _Call,
        engine: Any,
        make_chooser: Callable[[int], Any],
        make_drafter: Callable[[], NgramDrafter] | None,
        adapt_threads: bool,
        decoder: str,
    ) -> _Written:
        """The project's decoder: evaluate the prompt past the cached prefix, then write,
        steered away from the request's values to avoid (:mod:`.steering`)."""
        engine.truncate(call.cached)
        began = time.perf_counter()
        first = engine.evaluate_prompt(call.prompt[call.cached :], call.deadline)
        prompt_seconds = time.perf_counter() - began

        def on_step(tokens: int, seconds: float) -> None:
            if adapt_threads:
                self.set_threads(self.governor.step(tokens, seconds))

        began = time.perf_counter()
        avoid = call.request.avoid
        steering = Steering(avoid=avoid.values if avoid is not None else ())
        stats = DecodeStats()
        while True:
            chooser = make_chooser(steering.forks)
            drafter = make_drafter() if make_drafter is not None else None
            transcript, ended = self._forced_start(call, engine, chooser, drafter, steering)
            watch = None
            if avoid is not None and steering.armed:
                watch = ValueWatch(avoid.field, avoid.values, _text_of(transcript))
                transcript.criteria = Stops([*call.stops, watch])
            recorder = RecordingChooser(chooser, list(steering.history)) if watch else chooser
            if not ended:
                rows = first if not steering.forced else _resume(engine, call.prompt, steering)
                gate = self.draft_gate(call.threads)
                part = decode_greedy(
                    engine, rows, transcript, recorder, drafter, DraftLength(), on_step, gate
                )
                stats = _added(stats, part)
            steering.count(len(transcript.tokens))
            if watch is None or watch.span is None or (call.clock and call.clock.fired):
                break
            if not _fork(engine, make_chooser, transcript, recorder, watch.span, steering):
                break
        return _Written(
            text=transcript.text.decode("utf-8", errors="ignore"),
            finish=transcript.finish or "length",
            completion_tokens=steering.written,
            evaluated=len(call.prompt) - call.cached,
            prompt_seconds=prompt_seconds,
            generation_seconds=time.perf_counter() - began,
            decode=stats,
            decoder=decoder,
            steered=steering.forks,
        )

    def _forced_start(
        self,
        call: _Call,
        engine: Any,
        chooser: Any,
        drafter: NgramDrafter | None,
        steering: Steering,
    ) -> tuple[Transcript, bool]:
        """A new transcript holding the attempt's forced first tokens, with the chooser's
        grammar and the drafter advanced past them; True when the reply ended in them."""
        transcript = self._transcript(call, engine)
        ended = False
        for token in steering.forced:
            chooser.accept(token)
            if drafter is not None:
                drafter.append(token)
            ended = ended or transcript.push(token)
        return transcript, ended

    @staticmethod
    def _transcript(call: _Call, engine: Any) -> Transcript:
        return Transcript(
            prompt=call.prompt,
            max_tokens=call.limit,
            piece=engine.piece,
            is_eog=engine.is_eog,
            stop=[s.encode("utf-8") for s in _stop_strings(call.formatted.stop)],
            criteria=call.stops,
        )

    def _text(self, call: _Call, written: _Written) -> str:
        if call.guard.kept is None:
            return written.text
        kept = call.guard.generated[: call.guard.kept]
        return bytes(self.llama.detokenize(kept)).decode("utf-8", "replace")

    def _stats(self, call: _Call, written: _Written) -> CallStats:
        stopped_by = written.finish
        if call.guard.kept is not None:
            stopped_by = "repetition"
        elif call.clock is not None and call.clock.fired and stopped_by == "stop":
            stopped_by = "deadline"
        elif call.blocks is not None and call.blocks.fired and stopped_by == "stop":
            stopped_by = "blocks"
        decode = written.decode
        return CallStats(
            prompt_tokens=len(call.prompt),
            cached_prompt_tokens=call.cached,
            evaluated_prompt_tokens=written.evaluated,
            prompt_seconds=written.prompt_seconds,
            completion_tokens=written.completion_tokens,
            generation_seconds=written.generation_seconds,
            seconds=time.perf_counter() - call.started,
            stopped_by=stopped_by,
            threads=call.threads,
            decoder=written.decoder,
            drafted_tokens=decode.drafted if decode else 0,
            accepted_tokens=decode.accepted if decode else 0,
            decode_steps=decode.steps if decode else 0,
            steered=written.steered,
            constrained=call.names is not None and bool(call.guards),
            refused_tokens=sum(guard.refused for guard in call.guards),
        )


def _guard(call: _Call, engine: Any) -> NameGuard | None:
    """A new name guard for one attempt at `call`'s reply (None: not constrained)."""
    if call.names is None:
        return None
    sql_names = call.request.sql_names
    fields = sql_names.json_fields if sql_names and call.request.json_schema else None
    guard = NameGuard(call.names, engine.piece, fields)
    call.guards.append(guard)
    return guard


def _fork(
    engine: Any,
    make_chooser: Callable[[int], Any],
    transcript: Transcript,
    recorder: RecordingChooser,
    span: tuple[int, int],
    steering: Steering,
) -> bool:
    """Move `steering` to where the written value in `span` can fork; False if nowhere."""

    def chooser_at(prefix: Sequence[int], attempt: int = steering.forks + 1) -> Any:
        advanced = make_chooser(attempt)
        for token in prefix:
            advanced.accept(token)
        return advanced

    tokens, steps = transcript.tokens, recorder.steps
    found = fork_point(steps, tokens, span, engine.piece, chooser_at, steering.tried, engine.is_eog)
    return steering.fork(found, tokens, steps)


def _resume(engine: Any, prompt: Sequence[int], steering: Steering) -> Any:
    """The logits after the attempt's forced first tokens, evaluating only what the KV cache
    does not hold yet: it holds the prompt and the abandoned reply, which shares all of
    them but the last."""
    forced = steering.forced
    keep = min(int(engine.n_tokens), len(prompt) + len(forced) - 1)
    engine.truncate(keep)
    rows = engine.decode(list(forced[keep - len(prompt) :]))
    return rows[-1:]


def _text_of(transcript: Transcript) -> Callable[[], bytes]:
    def text() -> bytes:
        return transcript.text

    return text


def _added(total: DecodeStats, part: DecodeStats) -> DecodeStats:
    return DecodeStats(
        steps=total.steps + part.steps,
        drafted=total.drafted + part.drafted,
        accepted=total.accepted + part.accepted,
        step_seconds=[*total.step_seconds, *part.step_seconds],
    )


def _stop_strings(stop: Any) -> list[str]:
    if stop is None:
        return []
    return [stop] if isinstance(stop, str) else list(stop)
