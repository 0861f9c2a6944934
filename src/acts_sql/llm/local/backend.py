"""The ``local`` backend object: a GGUF model run in this process by llama-cpp-python.

SPEC: ``local:qwen2.5-coder-1.5b`` (the default), ``local:qwen2.5-coder-0.5b``
(the embedded models, assembled by :mod:`acts_sql.llm.models`) or
``local:/path/model.gguf``. Needs the ``local`` extra
(``pip install 'acts-sql[local]'``). The package's doc
(:mod:`acts_sql.llm.local`) says how a call runs.

One loaded model per process
    Loaded models are kept in a module-level cache keyed by file and context
    settings, the one piece of global mutable state in the LLM layer: every
    backend object and every correction in a process share one loaded model
    and its KV cache, so nothing is loaded twice. A llama.cpp context is not
    thread-safe: each loaded model has a lock, held by a call from rendering
    the prompt to the last token. :func:`unload_models` empties the cache.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import threading
import time
from pathlib import Path

from acts_sql.errors import LLMSpecError
from acts_sql.llm.base import LLMRequest, LLMResponse, Usage
from acts_sql.llm.local.call import (
    PROMPT_LOOKUP_PURPOSES,
    CallStats,
    LoadedModel,
    lookup_purposes_from_env,
    project_sampler_enabled,
    prompt_lookup_enabled,
)
from acts_sql.llm.local.prompt_eval import deadline_error
from acts_sql.llm.local.threads import (
    ThreadGovernor,
    cores,
    fixed_threads,
    free_cores,
    quiet_openmp,
)
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

DEFAULT_N_CTX = 8192
INSTALL_HINT = "pip install 'acts-sql[local]'"


def llama_cpp_available() -> bool:
    """True when llama-cpp-python can be imported (without importing it)."""
    return importlib.util.find_spec("llama_cpp") is not None


LOOKUP_OFF_NOTE = (
    "prompt lookup off: this llama.cpp gives small batches to llamafile's kernels, which "
    "would change near-tied greedy tokens (scripts/demo.sh installs a patched build that "
    "does not; ACTS_SQL_PROMPT_LOOKUP=1 turns it on anyway)"
)


def require_llama_cpp(spec: str = "local:") -> None:
    """Raise LLMSpecError, saying how to install it, when llama-cpp-python is absent."""
    if not llama_cpp_available():
        raise LLMSpecError(
            f"LLM spec {spec!r}: the local backend needs llama-cpp-python, which is not "
            f"installed: {INSTALL_HINT} (builds llama.cpp from source the first time, about "
            "13 minutes on 2 cores), or use openai:MODEL with an OpenAI-compatible endpoint",
            spec=spec,
        )


def _check_settings(n_ctx: int, n_threads: int | None, max_tokens: int | None) -> None:
    if n_ctx < 512:
        raise LLMSpecError(f"local backend: n_ctx must be >= 512, got {n_ctx}")
    if n_threads is not None and n_threads < 1:
        raise LLMSpecError(f"local backend: n_threads must be >= 1, got {n_threads}")
    if max_tokens is not None and max_tokens < 1:
        raise LLMSpecError(f"local backend: max_tokens must be >= 1, got {max_tokens}")


def _resolve_model(text: str) -> tuple[ModelInfo | None, Path | None]:
    """A registry model, or a .gguf file that exists (exactly one of the two)."""
    if text.lower() in MODELS:
        return get_model(text), None
    if text.endswith(".gguf") or os.sep in text or "/" in text:
        path = Path(text).expanduser()
        if not path.is_file():
            raise LLMSpecError(f"LLM spec 'local:{text}': no such model file", path=text)
        return None, path.resolve()
    return get_model(text), None  # an unknown name: UnknownModelError lists the known


def _choose_prompt_lookup(prompt_lookup: bool | None) -> tuple[bool, str]:
    """Whether prompt lookup is on, and why it is off by default ("" if not so)."""
    chosen = prompt_lookup_enabled() if prompt_lookup is None else prompt_lookup
    if chosen is not None:
        return chosen, ""
    from acts_sql.llm.local.engine import batch_exact_build

    exact = batch_exact_build()
    return exact, "" if exact else LOOKUP_OFF_NOTE


_LOADED: dict[tuple[str, int, int, bool], LoadedModel] = {}
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
        prompt_lookup: bool | None = None,
        lookup_purposes: frozenset[str] | None = PROMPT_LOOKUP_PURPOSES,
        project_sampler: bool | None = None,
    ) -> None:
        """`model` is a registry name or a .gguf path. `max_tokens` caps every
        request's own limit. `prompt_lookup` (default: ACTS_SQL_PROMPT_LOOKUP,
        else on when llama.cpp was built for exact batches, see
        :func:`~acts_sql.llm.local.engine.batch_exact_build`) decodes greedy requests of
        `lookup_purposes` (None: of every purpose; ACTS_SQL_PROMPT_LOOKUP=all says so
        too) with prompt lookup.
        `project_sampler` (default: on unless ACTS_SQL_SAMPLER=llama-cpp) draws
        the tokens of requests at a temperature above 0 with the project's
        decoder instead of llama-cpp-python's loop.
        Nothing is loaded until :meth:`load` or the first call; the model
        name, path and llama-cpp-python are checked now."""
        text = (model or DEFAULT_LOCAL_MODEL).strip()
        require_llama_cpp(f"local:{text}")
        _check_settings(n_ctx, n_threads, max_tokens)
        self.info, self._path = _resolve_model(text)
        self.name = f"local:{self.info.name if self.info is not None else self._path}"
        self.n_ctx = n_ctx
        self.fixed_threads = fixed_threads(n_threads)
        self.n_threads = self.fixed_threads or cores()
        """Threads at most; the load decides below that unless fixed."""
        self.seed = seed
        self.max_tokens = max_tokens
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.installer = installer
        self.progress = progress
        self.extra_buffers = extra_buffers
        self.prompt_lookup, self.lookup_note = _choose_prompt_lookup(prompt_lookup)
        """`lookup_note`: why prompt lookup is off by default here ("" when it is on or
        was chosen)."""
        self.lookup_purposes = (
            lookup_purposes_from_env()
            if lookup_purposes is PROMPT_LOOKUP_PURPOSES
            else lookup_purposes
        )
        self.project_sampler = (
            project_sampler_enabled() if project_sampler is None else project_sampler
        )
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
        lookup = ", prompt lookup" if self.prompt_lookup else ""
        if self.lookup_note:
            lookup = f"; {self.lookup_note}"
        return (
            f"{self.title}, in process with llama.cpp ({threads}, context {self.n_ctx} "
            f"tokens{lookup})"
        )

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
                raise deadline_error(
                    self.name,
                    request.purpose,
                    timeout_s or 0.0,
                    deadline,
                    "while waiting for the model (another call was using it)",
                )
        try:
            threads = self.fixed_threads or loaded.governor.for_call()
            stats, text = loaded.run(
                request,
                name=self.name,
                n_ctx=self.n_ctx,
                seed=self.seed if request.seed is None else self.seed + request.seed,
                max_tokens=self.max_tokens,
                threads=threads,
                deadline=deadline,
                lookup=self.prompt_lookup
                and (self.lookup_purposes is None or request.purpose in self.lookup_purposes),
                sampler=self.project_sampler,
                adapt_threads=self.fixed_threads is None,
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
            decoder=stats.decoder,
            steered=stats.steered,
            constrained=stats.constrained,
            refused_tokens=stats.refused_tokens,
        )
        return LLMResponse(text=text, usage=usage)

    # -- internals ------------------------------------------------------------------

    def _loaded(self, progress: ProgressCallback | None) -> LoadedModel:
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

    def _load_llama(self, path: Path) -> LoadedModel:
        from acts_sql.llm.local.engine import chat_formatter, load_llama

        quiet_openmp()
        started = time.perf_counter()
        llama = load_llama(
            path,
            n_ctx=self.n_ctx,
            n_threads=self.n_threads,
            seed=self.seed,
            extra_buffers=self.extra_buffers,
        )
        start = self.fixed_threads or free_cores(self.n_threads)
        loaded = LoadedModel(
            llama,
            path,
            time.perf_counter() - started,
            chat_formatter(llama),
            self.n_threads,
            ThreadGovernor(self.n_threads, start),
        )
        loaded.set_threads(start)
        return loaded
