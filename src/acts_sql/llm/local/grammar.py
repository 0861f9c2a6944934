"""Decoding under a JSON grammar, cheap when the chosen token fits it.

A request with a ``json_schema`` is constrained by a grammar compiled from
that schema (llama.cpp's JSON-schema converter, what
``response_format={"type": "json_object", "schema": ...}`` does); a schema it
cannot compile falls back to a generic JSON grammar. llama-cpp-python applies
the grammar to the whole vocabulary (151k tokens for Qwen) at every step.
:class:`GrammarCheck` asks about the chosen token first and filters the
vocabulary only when it is rejected (what llama.cpp's own sampler does): for
the greedy token (:class:`GreedyGrammarSampler`, the same token, 1.5x faster
for JSON) and for a sampled one (:mod:`~acts_sql.llm.local.sampling`).
"""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING, Any

from acts_sql.llm.local.version import checked_llama_cpp

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


class GrammarCheck:
    """A grammar checked token by token: one token alone, or a whole row of logits.

    :meth:`allows` asks llama.cpp's grammar sampler about one token (cheap);
    :meth:`masked` applies it to the whole vocabulary (about 40 ms a row
    here); :meth:`accept` advances the grammar past a chosen token.
    """

    def __init__(self, llama: Any, grammar: Any) -> None:
        import ctypes

        checked_llama_cpp()
        from llama_cpp import llama_cpp as low_level
        from llama_cpp._internals import LlamaTokenDataArray

        self._low = low_level
        self.n_vocab = int(llama.n_vocab())
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
        self._all = LlamaTokenDataArray(n_vocab=self.n_vocab)
        self._byref = ctypes.byref

    def allows(self, token: int, logit: float) -> bool:
        """Whether the grammar allows `token` next."""
        low = self._low
        self._one[0] = low.llama_token_data(token, logit, 0.0)
        self._one_array.size = 1
        self._one_array.selected = -1
        low.llama_sampler_apply(self._sampler, self._byref(self._one_array))
        return bool(self._one[0].logit != float("-inf"))

    def masked(self, logits: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """The row with -inf for every token the grammar refuses (valid until the next call)."""
        self._all.copy_logits(logits)
        self._low.llama_sampler_apply(self._sampler, self._byref(self._all.candidates))
        return self._all.candidates_data.logit  # type: ignore[no-any-return]

    def accept(self, token: int) -> None:
        self._low.llama_sampler_accept(self._sampler, token)

    def close(self) -> None:
        if self._sampler is not None:
            self._low.llama_sampler_free(self._sampler)
            self._sampler = None

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()


class GreedyGrammarSampler:
    """The most likely token a grammar allows, checking the argmax first.

    Stands in for llama-cpp-python's sampler chain (grammar, then greedy)
    when the temperature is 0 (:meth:`sample`, what the chain is asked), and
    picks tokens from logit rows for the project's decoder (:meth:`choose`).
    Every chosen token advances the grammar.
    """

    def __init__(self, llama: Any, grammar: Any) -> None:
        from llama_cpp import llama_cpp as low_level

        self._check = GrammarCheck(llama, grammar)
        self._low = low_level

    def sample(self, ctx: Any, idx: int = -1) -> int:
        import numpy as np

        logits = np.ctypeslib.as_array(
            self._low.llama_get_logits_ith(ctx.ctx, idx), shape=(self._check.n_vocab,)
        )
        return self.choose(logits)

    def choose(self, logits: npt.NDArray[np.float32], best: int | None = None) -> int:
        """The greedy token of one row of logits under the grammar, accepted by it.

        `best` is the row's argmax when the caller has it already.
        """
        import numpy as np

        check = self._check
        token = int(np.argmax(logits)) if best is None else best
        if not check.allows(token, float(logits[token])):
            token = int(np.argmax(check.masked(logits)))
        check.accept(token)
        return token

    def accept(self, token: int) -> None:
        self._check.accept(token)

    def allows(self, token: int, logit: float) -> bool:
        return self._check.allows(token, logit)

    def masked(self, logits: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """The row with -inf for every token the grammar refuses."""
        return self._check.masked(logits)

    def close(self) -> None:
        self._check.close()
