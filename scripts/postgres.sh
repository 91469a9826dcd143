#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests: installed from Debian's packages if missing,
# created once under target/postgres (or /tmp/llmtool-postgres when the `postgres` user cannot
# reach the checkout), run on a loopback port as a non-root user (the `postgres` user when
# this runs as root), trusting only local connections.
#
#   scripts/postgres.sh start   # prints `export LLMTOOL_TEST_POSTGRES=postgres://...`
#   scripts/postgres.sh stop
set -euo pipefail
cd "$(dirname "$0")/.."

PORT="${LLMTOOL_PG_PORT:-54329}"
ROOT="$PWD/target/postgres"
DATA="$ROOT/data"
LOG="$ROOT/server.log"

find_bin() {
  command -v "$1" 2>/dev/null && return
  ls /usr/lib/postgresql/*/bin/"$1" 2>/dev/null | sort -V | tail -n 1
}

install_if_missing() {
  if [ -z "$(find_bin initdb)" ]; then
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends postgresql >&2
  fi
}

# Runs a PostgreSQL program as the cluster's owner.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

start() {
  install_if_missing
  local initdb pg_ctl
  initdb="$(find_bin initdb)"
  pg_ctl="$(find_bin pg_ctl)"
  mkdir -p "$ROOT"
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres "$ROOT"
    # The postgres user may not be able to reach a checkout under root's home: then the
    # cluster lives in a folder of its own under /tmp.
    if ! runuser -u postgres -- test -w "$ROOT"; then
      ROOT="/tmp/llmtool-postgres"
      DATA="$ROOT/data"
      LOG="$ROOT/server.log"
      mkdir -p "$ROOT"
      chown postgres "$ROOT"
    fi
  fi
  if [ ! -f "$DATA/PG_VERSION" ]; then
    as_owner "$initdb" -D "$DATA" -A trust -U llmtool --no-instructions >"$ROOT/initdb.log" 2>&1
  fi
  if ! as_owner "$pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
    as_owner "$pg_ctl" -D "$DATA" -l "$LOG" -w \
      -o "-p $PORT -c listen_addresses=127.0.0.1 -k $ROOT -c max_connections=200 -c fsync=off" \
      start >&2
  fi
  echo "export LLMTOOL_TEST_POSTGRES=postgres://llmtool@127.0.0.1:$PORT/postgres"
}

stop() {
  local pg_ctl data
  pg_ctl="$(find_bin pg_ctl)"
  [ -n "$pg_ctl" ] || return 0
  for data in "$DATA" /tmp/llmtool-postgres/data; do
    if [ -f "$data/PG_VERSION" ]; then
      as_owner "$pg_ctl" -D "$data" -m fast stop >&2 || true
    fi
  done
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
