#!/usr/bin/env bash
# Starts (or stops) a throwaway PostgreSQL and Redis on loopback for the tests, from Debian's
# packages, in a temporary directory. PostgreSQL's initdb refuses to run as root, so as root the
# cluster belongs to the `postgres` user the Debian package creates.
#
#   eval "$(bash scripts/services.sh start DIR)"   # prints the export lines for the URLs
#   bash scripts/services.sh stop DIR
#
# Prints nothing for a server that cannot be installed or started (the tests that need it say
# they are skipped, and why); never fails the caller.
set -uo pipefail

cmd=${1:?start or stop}
dir=${2:?a directory}
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"

pg_bin() {
  local found
  found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [ -n "$found" ] && [ -x "$found/initdb" ] && echo "$found"
}

install() {  # apt-get install "$@", quietly, once per call
  command -v apt-get >/dev/null || return 1
  { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq "$@"; } >/dev/null 2>&1
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

start_pg() {
  local bin port owner
  bin=$(pg_bin) || { install postgresql && bin=$(pg_bin); } || {
    echo "services.sh: PostgreSQL could not be installed" >&2; return; }
  port=$(free_port)
  mkdir -p "$dir/pg"
  owner=$(id -un)
  run=()
  if [ "$(id -u)" = 0 ]; then
    owner=postgres
    id postgres >/dev/null 2>&1 || useradd -r -M postgres >/dev/null 2>&1
    chown -R postgres: "$dir/pg"
    chmod 755 "$dir"
    run=(runuser -u postgres --)
  fi
  if ! "${run[@]}" "$bin/initdb" -D "$dir/pg/data" -U postgres -A trust --no-sync \
      >"$dir/pg/initdb.log" 2>&1; then
    echo "services.sh: initdb failed (see $dir/pg/initdb.log)" >&2; return
  fi
  if ! "${run[@]}" "$bin/pg_ctl" -D "$dir/pg/data" -l "$dir/pg/log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir/pg -c fsync=off -c max_connections=400" \
      start >/dev/null 2>&1; then
    echo "services.sh: PostgreSQL did not start (see $dir/pg/log)" >&2; return
  fi
  echo "$bin" >"$dir/pg/bin"
  echo "$owner" >"$dir/pg/owner"
  echo "export GTH_TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:$port/postgres"
}

start_redis() {
  local port
  command -v redis-server >/dev/null || install redis-server || {
    echo "services.sh: Redis could not be installed" >&2; return; }
  port=$(free_port)
  mkdir -p "$dir/redis"
  if ! redis-server --bind 127.0.0.1 --port "$port" --dir "$dir/redis" --save "" \
      --appendonly no --daemonize yes --pidfile "$dir/redis/pid" --logfile "$dir/redis/log" \
      >/dev/null 2>&1; then
    echo "services.sh: Redis did not start (see $dir/redis/log)" >&2; return
  fi
  for _ in $(seq 50); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && break
    sleep 0.1
  done
  echo "export GTH_TEST_REDIS_URL=redis://127.0.0.1:$port/0"
}

stop_all() {
  if [ -f "$dir/pg/bin" ]; then
    local bin run=()
    bin=$(cat "$dir/pg/bin")
    [ "$(id -u)" = 0 ] && run=(runuser -u "$(cat "$dir/pg/owner")" --)
    "${run[@]}" "$bin/pg_ctl" -D "$dir/pg/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  if [ -f "$dir/redis/pid" ]; then
    local pid
    pid=$(cat "$dir/redis/pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -rf "$dir"
}

case "$cmd" in
  start) mkdir -p "$dir"; start_pg; start_redis ;;
  stop) stop_all ;;
  *) echo "usage: services.sh start|stop DIR" >&2; exit 2 ;;
esac
exit 0
