# Sourced by the other scripts: makes .venv and installs the project into it.
# Re-installs only when pyproject.toml (or the llama.cpp build) changed since the last install.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PY="${PYTHON:-python3}"

# Runs "$@" and prints the elapsed time to stderr every ACTS_SQL_PROGRESS_EVERY
# seconds (30) while it runs, so that a long quiet step (pip building
# llama.cpp) shows it is alive. Returns the command's exit status.
with_progress() {
  local label="$1"
  shift
  local every="${ACTS_SQL_PROGRESS_EVERY:-30}"
  local started=$SECONDS
  local next=$every
  "$@" &
  local pid=$!
  trap 'kill "$pid" 2>/dev/null' INT TERM
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    kill -0 "$pid" 2>/dev/null || break
    local elapsed=$((SECONDS - started))
    if [ "$elapsed" -ge "$next" ]; then
      printf '  %s: %dm%02ds elapsed\n' "$label" $((elapsed / 60)) $((elapsed % 60)) >&2
      next=$((next + every))
    fi
  done
  trap - INT TERM
  local status=0
  wait "$pid" || status=$?
  return "$status"
}

# llama.cpp is patched so that llamafile's matrix kernels take only batches of 8 tokens or
# more (scripts/patch_llama_source.py): a position's logits are then the same, bit for bit,
# in a batch of up to 7 tokens as alone, so prompt lookup writes exactly what plain greedy
# decoding writes (acts_sql.llm.local.lookup.MAX_VERIFY_BATCH), and prompts are still read
# with the fast kernels. ACTS_SQL_LLAMA_PATCH="" builds the sdist as published (prompt
# lookup is then off unless ACTS_SQL_PROMPT_LOOKUP=1); ACTS_SQL_LLAMA_CMAKE_ARGS is passed
# to the build (e.g. -DGGML_LLAMAFILE=OFF: exact too, without the kernels at all, and cold
# prompts about 40 % slower).
LLAMA_CMAKE_ARGS="${ACTS_SQL_LLAMA_CMAKE_ARGS-}"
LLAMA_PATCH="${ACTS_SQL_LLAMA_PATCH-8}"

# What the build depends on besides the pinned version: the args, and the patch's edits.
llama_build_key() {
  echo "$LLAMA_CMAKE_ARGS"
  if [ -n "$LLAMA_PATCH" ]; then
    "$PY" "$ROOT/scripts/patch_llama_source.py" . --show --min-rows "$LLAMA_PATCH"
  fi
}

# Where the llama-cpp-python wheel of this build is kept: pip's own wheel cache ignores
# CMAKE_ARGS and patches (it may hold a wheel built with llama.cpp's defaults), and the build
# is compiled for this CPU, so the folder is named by the CPU's flags and the build key.
llama_wheel_dir() {
  local key
  key="$( (grep -m1 -E '^(flags|Features)' /proc/cpuinfo 2>/dev/null || uname -m; llama_build_key) | sha256sum | cut -c1-12)"
  echo "${ACTS_SQL_WHEEL_CACHE:-$HOME/.cache/acts-sql/wheels}/llama-$key"
}

# Installs llama-cpp-python (the version pyproject.toml pins) from that folder, building the
# wheel there first when it is missing (about 13 minutes on 2 cores, once): the sdist is
# fetched, unpacked, patched and built.
ensure_llama_wheel() {
  local version dir wheel src
  version="$(grep -o 'llama-cpp-python==[0-9.]*' "$ROOT/pyproject.toml" | head -1 | cut -d= -f3)"
  dir="$(llama_wheel_dir)"
  wheel="$(ls "$dir"/llama_cpp_python-"$version"-*.whl 2>/dev/null | head -1 || true)"
  if [ -z "$wheel" ]; then
    echo "building llama-cpp-python $version from source (patch: ${LLAMA_PATCH:-none}," \
      "args: ${LLAMA_CMAKE_ARGS:-none}): about 13 minutes on 2 cores, once; the wheel is" \
      "kept in $dir" >&2
    mkdir -p "$dir"
    src="$(mktemp -d)"
    (
      trap 'rm -rf "$src"' EXIT  # the sources go, whether the build worked or not
      "$VENV/bin/python" -m pip download --quiet --disable-pip-version-check --no-deps \
        --no-binary :all: -d "$src" "llama-cpp-python==$version"
      tar xzf "$src/llama_cpp_python-$version.tar.gz" -C "$src"
      if [ -n "$LLAMA_PATCH" ]; then
        "$VENV/bin/python" "$ROOT/scripts/patch_llama_source.py" \
          "$src/llama_cpp_python-$version" --min-rows "$LLAMA_PATCH" >&2
      fi
      CMAKE_ARGS="$LLAMA_CMAKE_ARGS" with_progress "building llama-cpp-python" \
        "$VENV/bin/python" -m pip wheel --quiet --disable-pip-version-check --no-deps \
        --no-cache-dir -w "$dir" "$src/llama_cpp_python-$version"
    )
    wheel="$(ls "$dir"/llama_cpp_python-"$version"-*.whl | head -1)"
  fi
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
    --force-reinstall "$wheel"
}

ensure_venv() {
  local extras="$1"
  if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "acts-sql needs Python 3.11 or newer; $PY is $("$PY" --version 2>&1)" >&2
    exit 2
  fi
  if [ ! -x "$VENV/bin/python" ]; then
    echo "creating $VENV" >&2
    "$PY" -m venv "$VENV"
  fi
  local stamp="$VENV/.acts-sql-installed-$extras"
  local want
  want="$( (cat "$ROOT/pyproject.toml"; llama_build_key) | sha256sum | cut -d' ' -f1)"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    case ",$extras," in *,local,*) ensure_llama_wheel ;; esac
    echo "installing acts-sql[$extras] into $VENV" >&2
    with_progress "installing acts-sql[$extras]" \
      "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e "$ROOT[$extras]"
    echo "$want" > "$stamp"
  fi
}
