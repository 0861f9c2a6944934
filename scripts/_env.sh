# Sourced by the other scripts: makes .venv and installs the project into it.
# Re-installs only when pyproject.toml changed since the last install.
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
  want="$(sha256sum "$ROOT/pyproject.toml" | cut -d' ' -f1)"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    echo "installing acts-sql[$extras] into $VENV" >&2
    with_progress "installing acts-sql[$extras]" \
      "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e "$ROOT[$extras]"
    echo "$want" > "$stamp"
  fi
}
