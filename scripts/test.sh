#!/usr/bin/env bash
# The test command: installs what it needs into .venv, then runs the whole suite
# (unit and integration tests, ruff, import-linter layer contracts).
# Extra arguments go to pytest, e.g. `scripts/test.sh -k figure3`.
source "$(dirname "$0")/_env.sh"
ensure_venv dev
cd "$ROOT"
exec "$VENV/bin/python" -m pytest "$@"
