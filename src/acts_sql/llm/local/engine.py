"""llama-cpp-python underneath: loading, and the evaluation primitives.

The project reaches past llama-cpp-python's public API in a few places: the
grammar checks of the decoders (``Llama._model``, ``LlamaGrammar._grammar``), the
decoder's batch evaluation with logits for every position and its KV-cache
roll-back (``Llama._ctx``, ``Llama._batch``, ``input_ids``), the deadline
between prompt batches (``Llama.eval``, ``Llama._init_sampler``). They are
used only through this module and the grammar module, after
:func:`~acts_sql.llm.local.version.checked_llama_cpp` has checked that the
installed llama-cpp-python is the version they were written against
(``LLAMA_CPP_VERSION``, the one the ``local`` extra pins); another version is a
``LocalModelLoadError`` that says so.

Extra CPU buffer types
    llama.cpp repacks weights into "extra buffer types" (AMX tiles on CPUs
    that advertise AMX). On this project's virtual machines, which advertise
    AMX, the first decode then crashes the process (SIGSEGV). Models are
    therefore loaded with ``use_extra_bufts = false``, which costs nothing
    measurable here; llama-cpp-python has no argument for it, so the default
    model parameters are patched for the duration of the load (under the load
    lock). ``extra_buffers=True`` restores llama.cpp's default.

Batch numerics
    Prompt lookup's reply equals plain greedy decoding only if llama.cpp
    computes a position's logits the same in a batch as alone
    (``scripts/batch_numerics.py`` compares them). With llama.cpp's default
    build it does not: from 2 tokens on, F16 and F32 matrix products go to
    llamafile's kernels (``llamafile_sgemm`` declines single rows), which sum
    in another order, and the logits differ by 0.45 to 0.65 after a prompt of
    the engine's usual length. Without llamafile's kernels for fewer than 8
    rows (the patched build `scripts/demo.sh` installs,
    `scripts/patch_llama_source.py`; or the slower ``GGML_LLAMAFILE=OFF``
    build), batches of up to 7 tokens are bit-identical to single steps, at
    887 tokens of context, with 1 or 2 threads and an F16 or F32 KV cache,
    without flash attention (whose single-row path splits long contexts
    across threads); from 8 tokens on another kernel path differs again,
    hence :data:`~acts_sql.llm.local.lookup.MAX_VERIFY_BATCH`.
    :func:`batch_exact_build` tells which build is installed. Models are
    loaded with llama.cpp's defaults otherwise (no flash attention, F16 KV
    cache, the fastest here); `flash_attn` and `kv_f32` exist for that
    measurement.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acts_sql.llm.local.lookup import MAX_VERIFY_BATCH
from acts_sql.llm.local.prompt_eval import Pace, evaluate_in_batches
from acts_sql.llm.local.version import LocalModelLoadError, checked_llama_cpp

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

CHATML = (
    "{% for message in messages %}<|im_start|>{{ message.role }}\n"
    "{{ message.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


@functools.cache
def llama_class() -> type:
    """llama_cpp.Llama, with the fast sampler for greedy decoding under a grammar,
    and prompt evaluation that stops at a deadline (:attr:`prompt_deadline`)."""
    import llama_cpp

    checked_llama_cpp()

    class Llama(llama_cpp.Llama):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.prompt_deadline: float | None = None
            """Set before a completion; the next ``eval`` (the prompt's) checks it, once."""
            self.prompt_pace = Pace()
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
            from acts_sql.llm.local.grammar import GreedyGrammarSampler

            neutral = (
                kwargs.get("repeat_penalty", 1.0) == 1.0
                and kwargs.get("frequency_penalty", 0.0) == 0.0
                and kwargs.get("presence_penalty", 0.0) == 0.0
                and kwargs.get("logits_processor") is None
            )
            grammar = kwargs.get("grammar")
            if grammar is not None and kwargs.get("temp") == 0.0 and neutral:
                return GreedyGrammarSampler(self, grammar)
            return super()._init_sampler(**kwargs)

    return Llama


def batch_exact_build() -> bool:
    """Whether a batch of up to :data:`~acts_sql.llm.local.lookup.MAX_VERIFY_BATCH` tokens
    gets the logits of single steps in the installed llama.cpp (see "Batch numerics"):
    built without llamafile's matrix kernels (no ``LLAMAFILE`` in its system info), or
    patched to use them only from N rows on (``LLAMAFILE = N``, N above the cap;
    `scripts/patch_llama_source.py`). ``LLAMAFILE = 1`` is the stock build; False also
    when it cannot be told."""
    try:
        import llama_cpp

        info = llama_cpp.llama_print_system_info()
    except Exception:  # no llama.cpp, or one without the call: not known to be exact
        return False
    text = info.decode("utf-8", "replace") if isinstance(info, bytes) else str(info)
    found = re.search(r"\bLLAMAFILE = (\S+)", text)
    if found is None:
        return True
    rows = found.group(1)
    return rows.isdigit() and int(rows) > MAX_VERIFY_BATCH


def load_llama(
    path: Path,
    *,
    n_ctx: int,
    n_threads: int,
    seed: int,
    extra_buffers: bool,
    flash_attn: bool = False,
    kv_f32: bool = False,
) -> Any:
    """A loaded ``Llama`` (the subclass above); LocalModelLoadError when llama.cpp refuses.

    `flash_attn` and `kv_f32` (an F32 KV cache instead of F16) change how
    attention is computed; see "Batch numerics" above."""
    cls = llama_class()
    from llama_cpp import llama_cpp as low_level

    original = low_level.llama_model_default_params

    def model_params() -> Any:
        params = original()
        params.use_extra_bufts = extra_buffers
        return params

    low_level.llama_model_default_params = model_params
    try:
        return cls(
            model_path=str(path),
            n_ctx=n_ctx,
            n_threads=n_threads,
            n_threads_batch=n_threads,
            seed=seed,
            flash_attn=flash_attn,
            type_k=low_level.GGML_TYPE_F32 if kv_f32 else None,
            type_v=low_level.GGML_TYPE_F32 if kv_f32 else None,
            verbose=False,
        )
    except (ValueError, RuntimeError, OSError) as exc:
        raise LocalModelLoadError(f"llama.cpp cannot load {path}: {exc}", path=str(path)) from None
    finally:
        low_level.llama_model_default_params = original


def chat_formatter(llama: Any) -> Callable[..., Any]:
    """The chat template of the GGUF file (ChatML when it has none)."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    template = llama.metadata.get("tokenizer.chat_template") or CHATML
    eos_id, bos_id = llama.token_eos(), llama.token_bos()
    return Jinja2ChatFormatter(
        template=template,
        eos_token=_token_text(llama, eos_id),
        bos_token=_token_text(llama, bos_id),
        stop_token_ids=[eos_id] if eos_id >= 0 else None,
    )


def _token_text(llama: Any, token: int) -> str:
    if token < 0:
        return ""
    return bytes(llama.detokenize([token], special=True)).decode("utf-8", "replace")


class LlamaEngine:
    """The evaluation primitives of the project's decoder, on one loaded ``Llama``.

    Keeps llama-cpp-python's own record of the KV cache (``input_ids``,
    ``n_tokens``) in step with llama.cpp's, so that a later
    ``create_completion`` reuses the cached prefix as usual.
    """

    def __init__(self, llama: Any) -> None:
        checked_llama_cpp()
        from llama_cpp import llama_cpp as low_level

        self.llama = llama
        self._low = low_level
        self.n_vocab = int(llama.n_vocab())
        self._vocab = llama._model.vocab

    @property
    def n_tokens(self) -> int:
        return int(self.llama.n_tokens)

    def cached_tokens(self) -> list[int]:
        return [int(t) for t in self.llama.input_ids[: self.llama.n_tokens]]

    def is_eog(self, token: int) -> bool:
        return bool(self._low.llama_vocab_is_eog(self._vocab, token))

    def piece(self, token: int) -> bytes:
        return bytes(self.llama.detokenize([token]))

    def truncate(self, n_tokens: int) -> None:
        """Forget the KV cells from position `n_tokens` on."""
        llama = self.llama
        if n_tokens < llama.n_tokens:
            llama._ctx.kv_cache_seq_rm(-1, n_tokens, -1)
            llama.n_tokens = n_tokens
        llama._requires_eval = True  # the context's logits are no longer the last token's

    def evaluate_prompt(self, tokens: Sequence[int], deadline: float | None) -> npt.NDArray[Any]:
        """Evaluate `tokens` after the cached ones (in batches, checking `deadline`);
        the logits after the last one."""
        import numpy as np

        self.llama.prompt_deadline = deadline
        try:
            self.llama.eval(list(tokens))
        finally:
            self.llama.prompt_deadline = None
        row = self._low.llama_get_logits_ith(self.llama.ctx, -1)
        return np.ctypeslib.as_array(row, shape=(1, self.n_vocab))

    def decode(self, tokens: Sequence[int]) -> npt.NDArray[np.float32]:
        """Evaluate `tokens` after the cached ones in one batch; the logits after each of them.

        The rows are valid until the next evaluation.
        """
        import numpy as np

        llama = self.llama
        past = int(llama.n_tokens)
        count = len(tokens)
        llama._ctx.kv_cache_seq_rm(-1, past, -1)
        llama._batch.set_batch(batch=list(tokens), n_past=past, logits_all=True)
        llama._ctx.decode(llama._batch)
        llama.input_ids[past : past + count] = tokens
        llama.n_tokens = past + count
        llama._requires_eval = False
        logits = self._low.llama_get_logits(llama.ctx)
        return np.ctypeslib.as_array(logits, shape=(count, self.n_vocab))

    def greedy_grammar(self, grammar: Any) -> Any:
        from acts_sql.llm.local.grammar import GreedyGrammarSampler

        return GreedyGrammarSampler(self.llama, grammar)

    def grammar_check(self, grammar: Any) -> Any:
        from acts_sql.llm.local.grammar import GrammarCheck

        return GrammarCheck(self.llama, grammar)
