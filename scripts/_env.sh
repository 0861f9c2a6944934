# Sourced by the other scripts: makes .venv and installs the project into it.
# Re-installs only when pyproject.toml changed since the last install.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PY="${PYTHON:-python3}"

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
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e "$ROOT[$extras]"
    echo "$want" > "$stamp"
  fi
}
