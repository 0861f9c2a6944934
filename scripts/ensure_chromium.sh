#!/usr/bin/env bash
# Installs Debian's chromium (for the viewer's browser test) when it is missing.
# Never fails the caller: without chromium, the browser test skips and says why.
# ACTS_SQL_NO_CHROMIUM=1 skips the install.
set -uo pipefail
if [ "${ACTS_SQL_NO_CHROMIUM:-0}" = 1 ] || command -v chromium >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "chromium is missing and cannot be installed here (needs root and apt-get);" \
    "the browser test will skip" >&2
  exit 0
fi
log="$(mktemp -t acts-sql-chromium.XXXXXX.log)"
echo "installing chromium for the browser test (apt-get; log: $log)" >&2
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -q --no-install-recommends chromium fonts-liberation >"$log" 2>&1; then
  apt-get update -q >>"$log" 2>&1
  apt-get install -y -q --no-install-recommends chromium fonts-liberation >>"$log" 2>&1 \
    || echo "chromium could not be installed (see $log); the browser test will skip" >&2
fi
exit 0
