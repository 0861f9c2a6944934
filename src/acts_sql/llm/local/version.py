"""Which llama-cpp-python this package was written against, and the check that it is the
one installed (the backend uses its private parts, which change between versions).

Its own module so that the engine and the grammar sampler can both ask without
importing each other.
"""

from __future__ import annotations

import functools

from acts_sql.errors import LLMUnavailableError

LLAMA_CPP_VERSION = "0.3.36"
"""The llama-cpp-python version whose internals this package uses."""


class LocalModelLoadError(LLMUnavailableError):
    """llama.cpp could not load the GGUF file (or llama-cpp-python is not the expected version)."""


@functools.cache
def checked_llama_cpp() -> str:
    """The installed llama-cpp-python version, when it is :data:`LLAMA_CPP_VERSION`.

    Raises LocalModelLoadError otherwise: the backend uses private parts of
    llama-cpp-python that change between versions.
    """
    import llama_cpp

    version = str(getattr(llama_cpp, "__version__", "unknown"))
    if version != LLAMA_CPP_VERSION:
        raise LocalModelLoadError(
            f"the local backend needs llama-cpp-python {LLAMA_CPP_VERSION} (it uses its "
            f"internals: Llama._ctx, Llama._batch, Llama._model, LlamaGrammar._grammar), "
            f"but {version} is installed: pip install 'llama-cpp-python=={LLAMA_CPP_VERSION}'",
            installed=version,
            expected=LLAMA_CPP_VERSION,
        )
    return version
