#!/usr/bin/env bash
# The test command: installs what it needs into .venv, starts private PostgreSQL and MariaDB
# servers (scripts/services.sh), runs the whole suite (unit and integration tests, ruff,
# import-linter layer contracts) and stops the servers again, also when tests fail.
# Extra arguments go to pytest, e.g. `scripts/test.sh -k figure3`.
# ACTS_SQL_NO_SERVICES=1 skips the servers (their tests then skip with a reason);
# under CI (CI=true) a server that does not start fails the run instead.
source "$(dirname "$0")/_env.sh"
ensure_venv dev
cd "$ROOT"
bash "$ROOT/scripts/ensure_chromium.sh"  # for the viewer's browser test

SERVICES_DIR=""
stop_services() {
  if [ -n "$SERVICES_DIR" ]; then
    bash "$ROOT/scripts/services.sh" stop "$SERVICES_DIR" || true
    SERVICES_DIR=""
  fi
}
trap stop_services EXIT
trap 'stop_services; exit 130' INT TERM

if [ "${CI:-}" = true ]; then
  export ACTS_SQL_REQUIRE_SERVICES=1
fi
if [ "${ACTS_SQL_NO_SERVICES:-0}" != 1 ]; then
  SERVICES_DIR="$(bash "$ROOT/scripts/services.sh" start)"
  # shellcheck disable=SC1091
  source "$SERVICES_DIR/env"
fi
"$VENV/bin/python" -m pytest "$@"
