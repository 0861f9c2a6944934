"""Greedy decoding under a JSON grammar, cheap when the best token fits it.

A request with a ``json_schema`` is constrained by a grammar compiled from
that schema (llama.cpp's JSON-schema converter, what
``response_format={"type": "json_object", "schema": ...}`` does); a schema it
cannot compile falls back to a generic JSON grammar. llama-cpp-python applies
the grammar to the whole vocabulary (151k tokens for Qwen) at every step; the
greedy token is the most likely one the grammar allows, so checking the most
likely token first and filtering the vocabulary only when it is rejected (what
llama.cpp's own sampler does) picks the same token, 1.5x faster for JSON.
"""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING, Any

from acts_sql.llm.local.engine import checked_llama_cpp

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

MAX_GRAMMARS = 64


class GrammarCache:
    """Compiled grammars by schema (generic JSON when a schema cannot be compiled)."""

    def __init__(self) -> None:
        self._grammars: dict[str, Any] = {}

    def get(self, schema: dict[str, Any]) -> Any:
        from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar

        key = json.dumps(schema)  # not sorted: the grammar writes properties in this order
        grammar = self._grammars.get(key)
        if grammar is None:
            try:
                grammar = LlamaGrammar.from_json_schema(key, verbose=False)
            except Exception:  # the converter raises bare exceptions on unsupported schemas
                grammar = LlamaGrammar.from_string(JSON_GBNF, verbose=False)
            if len(self._grammars) >= MAX_GRAMMARS:
                self._grammars.clear()
            self._grammars[key] = grammar
        return grammar


class GreedyGrammarSampler:
    """The most likely token a grammar allows, checking the argmax first.

    Stands in for llama-cpp-python's sampler chain (grammar, then greedy)
    when the temperature is 0 (:meth:`sample`, what the chain is asked), and
    picks tokens from logit rows for the project's decoder (:meth:`choose`).
    Every chosen token advances the grammar.
    """

    def __init__(self, llama: Any, grammar: Any) -> None:
        import ctypes

        checked_llama_cpp()
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

        logits = np.ctypeslib.as_array(
            self._low.llama_get_logits_ith(ctx.ctx, idx), shape=(self._n_vocab,)
        )
        return self.choose(logits)

    def choose(self, logits: npt.NDArray[np.float32], best: int | None = None) -> int:
        """The greedy token of one row of logits under the grammar, accepted by it.

        `best` is the row's argmax when the caller has it already.
        """
        import numpy as np

        low = self._low
        token = int(np.argmax(logits)) if best is None else best
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
