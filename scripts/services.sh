#!/usr/bin/env bash
# Private database servers for the integration tests, on free loopback ports.
#
#   scripts/services.sh start [DIR [SERVER...]]
#                                     start the SERVERs (postgresql, mariadb; default both) with
#                                     their data in DIR (default: a new temp dir); prints DIR on
#                                     stdout and writes DIR/env, which exports
#                                     ACTS_SQL_TEST_PG_URL and ACTS_SQL_TEST_MYSQL_URL for the
#                                     servers that started; a DIR an earlier start used is
#                                     refused (exit 2) until it is stopped
#   scripts/services.sh stop DIR      stop both and delete DIR
#
# PostgreSQL: Debian's /usr/lib/postgresql/<newest>/bin (15 on this machine), initdb into
# DIR/pg, pg_ctl on 127.0.0.1, run as the `postgres` user when this script runs as root
# (postgres refuses root); PostGIS (postgresql-<major>-postgis-3) installed with apt-get when
# missing, and left out with a message when it cannot be. MariaDB: mariadb-server (installed
# with apt-get when mariadbd is missing), mariadb-install-db into DIR/mysql, mariadbd on
# 127.0.0.1 with its own socket. Both have a user `acts` with password `acts-test-pw` that may
# create databases.
# As root, the servers run as their own users, who must reach DIR: a directory above DIR that
# they cannot enter (a private 0700 one, as `mktemp -d` makes) gets search permission for
# others (o+x, one line on stderr says which), and `stop` takes it back.
# A requested server that cannot start is reported on stderr and left out of DIR/env, and the
# script exits 1 (still printing DIR, so the servers that did start can be stopped); with
# ACTS_SQL_REQUIRE_SERVICES=1 it stops everything and prints nothing instead.
set -uo pipefail

PASSWORD="acts-test-pw"
MARKER=".acts-sql-services"  # in every services dir, so that `stop` can tell they are in use
USER_NAME="acts"
LOG() { echo "services: $*" >&2; }

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

as_service_user() {  # as_service_user USER CMD...: run CMD as USER when we are root
  local user="$1"
  shift
  if [ "$(id -u)" = 0 ]; then
    runuser -u "$user" -- "$@"
  else
    "$@"
  fi
}

ensure_user() {  # a system user to own a server's files when we are root
  local user="$1"
  [ "$(id -u)" = 0 ] || return 0
  id "$user" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$user"
}

apt_install() {  # apt_install PKG...: install, refreshing the package lists if needed
  [ "$(id -u)" = 0 ] || { LOG "not root: cannot apt-get install $*"; return 1; }
  export DEBIAN_FRONTEND=noninteractive
  local log="$STATE/apt-$1.log" wait_lock=(-o DPkg::Lock::Timeout=300)
  apt-get install "${wait_lock[@]}" -y -q --no-install-recommends "$@" >"$log" 2>&1 && return 0
  LOG "apt-get install $* failed; running apt-get update and trying again"
  apt-get update -q >>"$log" 2>&1
  apt-get install "${wait_lock[@]}" -y -q --no-install-recommends "$@" >>"$log" 2>&1
}

make_reachable() {  # make_reachable USER: let USER enter every directory above $STATE
  [ "$(id -u)" = 0 ] || return 0
  local user="$1" dir="" part parts mode
  IFS=/ read -ra parts <<<"${STATE#/}"
  unset 'parts[${#parts[@]}-1]'
  for part in "${parts[@]}"; do
    dir="$dir/$part"
    runuser -u "$user" -- test -x "$dir" 2>/dev/null && continue
    mode="$(stat -c %a "$dir")"
    if ! chmod o+x "$dir" 2>/dev/null || ! runuser -u "$user" -- test -x "$dir" 2>/dev/null; then
      LOG "$user cannot enter $dir (mode $mode), so its server cannot reach $STATE"
      return 1
    fi
    echo "$dir" >>"$STATE/granted"
    LOG "$dir is private (mode $mode): gave others search permission (o+x) so $user can" \
      "reach $STATE; 'stop' takes it back"
  done
}

ensure_postgis() {  # ensure_postgis BINDIR: PostGIS for that PostgreSQL, if it can be had
  local major
  major="$(basename "$(dirname "$1")")"
  [ -f "/usr/share/postgresql/$major/extension/postgis.control" ] && return 0
  LOG "PostGIS missing; installing postgresql-$major-postgis-3 with apt-get"
  apt_install "postgresql-$major-postgis-3" && return 0
  LOG "PostGIS not installed (see $STATE/apt-postgresql-$major-postgis-3.log):" \
    "BIRD-CRITIC tasks that need it stay not_evaluable"
}

pg_bindir() {
  local dir
  dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
  if [ -z "$dir" ] || [ ! -x "$dir/initdb" ]; then
    LOG "PostgreSQL binaries missing; installing postgresql with apt-get"
    apt_install postgresql >/dev/null || return 1
    dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
  fi
  echo "$dir"
}

start_postgres() {
  local bin port data="$STATE/pg"
  bin="$(pg_bindir)" || { LOG "no PostgreSQL"; return 1; }
  [ -n "$bin" ] || { LOG "no PostgreSQL"; return 1; }
  ensure_user postgres
  make_reachable postgres || return 1
  mkdir -p "$data" || { LOG "cannot create $data"; return 1; }
  ensure_postgis "$bin"
  printf '%s\n' "$PASSWORD" >"$STATE/pg.pw"
  [ "$(id -u)" = 0 ] && chown -R postgres "$data" "$STATE/pg.pw"
  as_service_user postgres "$bin/initdb" -D "$data/db" -U "$USER_NAME" --pwfile="$STATE/pg.pw" \
    --auth-host=scram-sha-256 --auth-local=trust --no-sync --encoding=UTF8 --locale=C.UTF-8 \
    >"$STATE/pg-initdb.log" 2>&1 || { LOG "initdb failed: see $STATE/pg-initdb.log"; return 1; }
  port="$(free_port)"
  as_service_user postgres "$bin/pg_ctl" -D "$data/db" -l "$data/server.log" -w -t 60 \
    -o "-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$data \
        -c fsync=off -c synchronous_commit=off -c full_page_writes=off \
        -c max_connections=60 -c shared_buffers=64MB" start >"$STATE/pg-start.log" 2>&1 \
    || { LOG "PostgreSQL did not start: see $data/server.log"; return 1; }
  echo "export ACTS_SQL_TEST_PG_URL='postgresql://$USER_NAME:$PASSWORD@127.0.0.1:$port/postgres'" \
    >>"$STATE/env"
  LOG "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port"
}

start_mariadb() {
  local port data="$STATE/mysql" sock user_opt=()
  if ! command -v mariadbd >/dev/null 2>&1 && [ ! -x /usr/sbin/mariadbd ]; then
    LOG "mariadbd missing; installing mariadb-server with apt-get"
    apt_install mariadb-server mariadb-client || { LOG "cannot install mariadb-server"; return 1; }
  fi
  local mariadbd
  mariadbd="$(command -v mariadbd || echo /usr/sbin/mariadbd)"
  mkdir -p "$data" || { LOG "cannot create $data"; return 1; }
  if [ "$(id -u)" = 0 ]; then
    ensure_user mysql
    make_reachable mysql || return 1
    chown -R mysql "$data"
    user_opt=(--user=mysql)
  fi
  sock="$data/mysqld.sock"
  mariadb-install-db --no-defaults --datadir="$data/db" "${user_opt[@]}" \
    --auth-root-authentication-method=normal --skip-test-db >"$STATE/mysql-install.log" 2>&1 \
    || { LOG "mariadb-install-db failed: see $STATE/mysql-install.log"; return 1; }
  port="$(free_port)"
  "$mariadbd" --no-defaults --datadir="$data/db" "${user_opt[@]}" --port="$port" \
    --bind-address=127.0.0.1 --socket="$sock" --pid-file="$data/mysqld.pid" \
    --log-error="$data/server.log" --skip-log-bin --innodb-buffer-pool-size=64M \
    --innodb-flush-log-at-trx-commit=0 --innodb-doublewrite=0 --max-connections=100 \
    --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci \
    >/dev/null 2>&1 &
  local i
  for i in $(seq 1 120); do
    mariadb-admin --no-defaults --socket="$sock" -uroot ping >/dev/null 2>&1 && break
    sleep 0.25
  done
  mariadb --no-defaults --socket="$sock" -uroot -e "
    CREATE USER '$USER_NAME'@'%' IDENTIFIED BY '$PASSWORD';
    CREATE USER '$USER_NAME'@'localhost' IDENTIFIED BY '$PASSWORD';
    GRANT ALL PRIVILEGES ON *.* TO '$USER_NAME'@'%';
    GRANT ALL PRIVILEGES ON *.* TO '$USER_NAME'@'localhost';" 2>"$STATE/mysql-user.log" \
    || { LOG "MariaDB did not start: see $data/server.log"; return 1; }
  echo "export ACTS_SQL_TEST_MYSQL_URL='mysql://$USER_NAME:$PASSWORD@127.0.0.1:$port/mysql'" \
    >>"$STATE/env"
  LOG "MariaDB $("$mariadbd" --version | awk '{print $3}') on 127.0.0.1:$port"
}

give_back() {  # take back the search permission make_reachable gave, unless still in use
  local dir other
  [ -f "$STATE/granted" ] || return 0
  sort -u "$STATE/granted" | while read -r dir; do
    # another services dir below it (started later, so it found it open) still needs it:
    # that one takes it back when it stops
    other="$(find "$dir" -maxdepth 6 -path "$STATE" -prune -o -name "$MARKER" -print -quit \
      2>/dev/null)"
    if [ -n "$other" ]; then
      echo "$dir" >>"$(dirname "$other")/granted"
    else
      chmod o-x "$dir" 2>/dev/null
    fi
  done
}

stop_all() {
  local bin pid
  [ -d "$STATE" ] || return 0
  if [ -f "$STATE/pg/db/postmaster.pid" ]; then
    bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
    as_service_user postgres "$bin/pg_ctl" -D "$STATE/pg/db" -m immediate -w stop >/dev/null 2>&1 \
      || kill "$(head -1 "$STATE/pg/db/postmaster.pid")" 2>/dev/null
  fi
  if [ -f "$STATE/mysql/mysqld.pid" ]; then
    pid="$(cat "$STATE/mysql/mysqld.pid")"
    kill "$pid" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
  fi
  give_back
  rm -rf "$STATE"
}

start_servers() {  # start_servers SERVER...: in parallel; fails if one of them did not start
  local server jobs=() failed=0 job
  for server in "$@"; do
    case "$server" in
      postgresql) start_postgres & ;;
      mariadb) start_mariadb & ;;
      *) LOG "unknown server '$server' (postgresql, mariadb)"; failed=1; continue ;;
    esac
    jobs+=("$!")
  done
  for job in "${jobs[@]}"; do
    wait "$job" || failed=1
  done
  return "$failed"
}

case "${1:-}" in
  start)
    STATE="${2:-$(mktemp -d "${TMPDIR:-/tmp}/acts-sql-services.XXXXXX")}"
    mkdir -p "$STATE" || { LOG "cannot create $STATE"; exit 1; }
    STATE="$(cd "$STATE" && pwd -P)"
    if [ -e "$STATE/$MARKER" ]; then
      LOG "$STATE already holds servers from an earlier start: stop them first" \
        "(scripts/services.sh stop $STATE) or give a new DIR"
      exit 2
    fi
    chmod 755 "$STATE"  # the server users must reach their data dirs
    : >"$STATE/env"
    : >"$STATE/$MARKER"
    if [ "$#" -gt 2 ]; then servers=("${@:3}"); else servers=(postgresql mariadb); fi
    if ! start_servers "${servers[@]}"; then
      if [ "${ACTS_SQL_REQUIRE_SERVICES:-0}" = 1 ]; then
        stop_all
        exit 1
      fi
      echo "$STATE"
      exit 1
    fi
    echo "$STATE"
    ;;
  stop)
    STATE="${2:?usage: services.sh stop DIR}"
    [ -d "$STATE" ] && STATE="$(cd "$STATE" && pwd -P)"
    case "$STATE" in */acts-sql-services.*|*/services*) ;; *)
      [ -f "$STATE/env" ] || { LOG "$STATE is not a services dir"; exit 2; } ;;
    esac
    stop_all
    ;;
  *)
    echo "usage: $0 start [DIR [postgresql|mariadb]...] | stop DIR" >&2
    exit 2
    ;;
esac
