#!/usr/bin/env bash
# The main job: installs what it needs into .venv, then runs `acts-sql demo`,
# correcting the paper's example tasks on the bundled SQLite database.
source "$(dirname "$0")/_env.sh"
ensure_venv dev
exec "$VENV/bin/acts-sql" demo "$@"
