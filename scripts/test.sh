#!/usr/bin/env bash
# The test command: installs what it needs into .venv (and, as root, with apt-get when missing:
# chromium for the viewer's browser test, postgresql, postgresql-<major>-postgis-3 and
# mariadb-server), starts private PostgreSQL and MariaDB servers (scripts/services.sh), runs
# the whole suite (unit and integration tests, ruff, import-linter layer contracts) and stops
# the servers again, also when tests fail.
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
  # services.sh exits 1 when a server did not start (its reason is on stderr); the tests of
  # that server then skip, except under CI, where it has already stopped everything
  SERVICES_DIR="$(bash "$ROOT/scripts/services.sh" start)" \
    || echo "test: not every database server started; the tests that need it skip" >&2
  if [ "${ACTS_SQL_REQUIRE_SERVICES:-0}" = 1 ] && [ -z "$SERVICES_DIR" ]; then
    echo "test: a database server did not start (required under CI)" >&2
    exit 1
  fi
  if [ -n "$SERVICES_DIR" ]; then
    # shellcheck disable=SC1091
    source "$SERVICES_DIR/env"
  fi
fi
# one worker per core (ACTS_SQL_TEST_WORKERS=N sets the number, 0 runs in one process); tests
# that share a database server or the Ray cluster stay on one worker (tests/worker_groups.py)
"$VENV/bin/python" -m pytest -n "${ACTS_SQL_TEST_WORKERS:-auto}" --dist loadfile "$@"
