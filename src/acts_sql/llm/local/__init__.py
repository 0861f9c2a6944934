"""Backend ``local``: a GGUF model run in this process by llama-cpp-python.

SPEC: ``local:qwen2.5-coder-1.5b`` (the default), ``local:qwen2.5-coder-0.5b``
or ``local:/path/model.gguf``. Needs the ``local`` extra. Importing this
package does not import llama-cpp-python. The modules:

===============  ===============================================================
``backend``      :class:`LocalBackend`, one loaded model per process
``call``         one completion: prompt, limits, which decoder, usage
``decoder``      the project's decoder (llama-cpp-python's rules, lean)
``lookup``       prompt lookup on token lists: drafter, acceptance, draft length
``sampling``     drawing at a temperature: llama.cpp's chain on the top tokens
``grammar``      decoding under a JSON grammar, the chosen token checked first
``sqlnames``     which identifiers a growing SQL text may hold (the schema's, aliases)
``constraint``   schema-constrained SQL: the guard, its greedy and sampling choosers
``guards``       stopping early: verbatim loops, the call's deadline
``prompt_eval``  the reused KV prefix; prompt batches that stop at a deadline
``threads``      how many threads, without polling the system on every call
``engine``       llama-cpp-python underneath: load, evaluation
``version``      the llama-cpp-python this package needs, and the check
===============  ===============================================================

The embedded models' files are assembled by :mod:`acts_sql.llm.models`.

A call
    The messages are rendered with the chat template stored in the GGUF
    (Qwen's ChatML template for the embedded models; plain ChatML for a file
    without one), tokenized, and completed with the request's temperature
    (0: greedy) and a fixed seed (plus the request's own ``seed``, which tells
    the samples of one pool apart), so a request always gets the same reply. A
    request with a ``json_schema`` is constrained by a grammar compiled from
    it (:mod:`~acts_sql.llm.local.grammar`). A small model at temperature 0
    sometimes repeats a passage verbatim until ``max_tokens``; generation
    stops as soon as the output ends in a repeated block and the repetition
    is cut off (:mod:`~acts_sql.llm.local.guards`; the JSON repair closes
    what is left open).

Prompt lookup
    Greedy requests of the purposes whose answer copies the prompt
    (``generate_sql``, ``fix_syntax``, ``decompose``, ``correct``) are decoded
    by the project's decoder: each model evaluation verifies a draft taken
    from the prompt (the tokens that followed the reply's last n-gram there)
    and keeps what greedy decoding confirms: a greedy reply in fewer
    evaluations (llama.cpp's batch numerics can tip a near-tie, as a cached
    prompt already can). ``ACTS_SQL_PROMPT_LOOKUP=0`` turns it off
    (llama-cpp-python's own loop then writes every reply), ``=all`` uses it
    for every greedy request.

Samples
    A request at a temperature above 0 (the samples of a candidate pool) is
    written by the same decoder without lookup, each token drawn from
    llama-cpp-python's default chain (top-k 40, top-p 0.95, min-p 0.05, then
    the temperature) computed on the top tokens, the grammar asked about the
    drawn token only (:mod:`~acts_sql.llm.local.sampling`).
    ``ACTS_SQL_SAMPLER=llama-cpp`` hands samples to llama-cpp-python's loop,
    which applies the grammar to the whole vocabulary at every token.

Prefix reuse (the KV cache)
    llama.cpp keeps the keys and values of the tokens it evaluated last;
    before evaluating a prompt, the longest common prefix of the prompt and
    those tokens is kept and only what follows is evaluated. Every call of
    one correction starts with the same system message and task block, so
    consecutive calls of any purposes share at least that; the samples of a
    pool have the very prompt of the pool's greedy call, so each of them
    evaluates one prompt token (the last, whose logits it samples from).
    ``Usage.cached_prompt_tokens`` is the reused length
    (:func:`~acts_sql.llm.local.prompt_eval.reused_prefix`).

Deadlines
    A request's ``timeout_s`` is the call's deadline, counted from the moment
    :meth:`LocalBackend.complete` is called (waiting for the model's lock
    counts). Decoding stops at the first token after it (``stopped_by``
    ``deadline``, the partial reply returned); prompt evaluation checks it
    before each batch and gives up as soon as the rest cannot be evaluated in
    time even at the fastest pace measured (an
    :class:`~acts_sql.errors.LLMDeadlineError`).
"""

from acts_sql.errors import LLMDeadlineError
from acts_sql.llm.local.backend import (
    DEFAULT_N_CTX,
    INSTALL_HINT,
    LocalBackend,
    llama_cpp_available,
    require_llama_cpp,
    unload_models,
)
from acts_sql.llm.local.call import (
    PROMPT_LOOKUP_PURPOSES,
    CallStats,
    LocalContextError,
    prompt_lookup_enabled,
)
from acts_sql.llm.local.guards import DeadlineGuard, RepetitionGuard, repeating_tail
from acts_sql.llm.local.prompt_eval import evaluate_in_batches, reused_prefix
from acts_sql.llm.local.threads import free_cores
from acts_sql.llm.local.version import LLAMA_CPP_VERSION, LocalModelLoadError

__all__ = [
    "DEFAULT_N_CTX",
    "INSTALL_HINT",
    "LLAMA_CPP_VERSION",
    "PROMPT_LOOKUP_PURPOSES",
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
    "prompt_lookup_enabled",
    "repeating_tail",
    "require_llama_cpp",
    "reused_prefix",
    "unload_models",
]
