"""llama-cpp-python's OpenAI-compatible server, with the model loaded as acts-sql loads it.

``python -m acts_sql.llm.local.openai_server --model FILE.gguf --port P --model_alias q05``
takes exactly the arguments of ``python -m llama_cpp.server`` and runs that server. The
one difference: models are loaded without llama.cpp's extra CPU buffer types
(``use_extra_bufts = false``), as the in-process backend loads them (see "Extra CPU
buffer types" in :mod:`acts_sql.llm.local.engine`): on a CPU that advertises AMX,
``python -m llama_cpp.server`` itself crashes (SIGSEGV) on its first completion, and
llama-cpp-python has no flag for it. On other machines the two are the same server.
Needs the ``local-server`` extra.
"""

from __future__ import annotations

from typing import Any

__all__ = ["main", "without_extra_buffers"]


def without_extra_buffers() -> None:
    """Make every later model load in this process skip the extra CPU buffer types."""
    from llama_cpp import llama_cpp as low_level

    original = low_level.llama_model_default_params
    if getattr(original, "acts_sql_patched", False):
        return

    def model_params() -> Any:
        params = original()
        params.use_extra_bufts = False
        return params

    model_params.acts_sql_patched = True  # type: ignore[attr-defined]
    low_level.llama_model_default_params = model_params


def main() -> None:
    """Run ``llama_cpp.server`` with the arguments of this process."""
    without_extra_buffers()
    from llama_cpp.server.__main__ import main as serve

    serve()


if __name__ == "__main__":
    main()
