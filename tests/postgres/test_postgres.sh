#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests (Debian's postgresql package):
#   test_postgres.sh start DIR   initdb in DIR/data, listen on a Unix socket in DIR only (no TCP),
#                                user floe with password DIR/password (scram-sha-256), database
#                                floe; prints the JDBC URI and writes it to DIR/uri; fsync off
#                                unless FLOE_PG_FSYNC=on (the benches)
#   test_postgres.sh stop DIR    stops the server and removes DIR
#   test_postgres.sh pause DIR   stops the server, keeping DIR (an outage: clients are cut off)
#   test_postgres.sh resume DIR  starts a paused server again
# As root the server runs as the postgres user (initdb refuses root).
set -euo pipefail

die() {
  echo "test_postgres: $*" >&2
  exit 1
}

[[ $# -eq 2 ]] || die "usage: test_postgres.sh start|stop|pause|resume DIR"
cmd=$1
dir=$2
bindir="$(ls -d /usr/lib/postgresql/*/bin 2> /dev/null | sort -V | tail -n 1)"
[[ -x "$bindir/initdb" ]] || die "PostgreSQL server binaries not found under /usr/lib/postgresql (apt-get install postgresql; scripts/install-deps.sh does)"

as_server() {
  if [[ $(id -u) -eq 0 ]]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

start_server() {
  as_server "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses='' -k $dir -c max_connections=100 -c fsync=${FLOE_PG_FSYNC:-off}" start > /dev/null ||
    die "server did not start: $(tail -n 5 "$dir/server.log")"
}

case "$cmd" in
  start)
    # A server left in DIR (a start repeated without a stop) would outlive its removed directory.
    [[ -d "$dir/data" ]] && as_server "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop > /dev/null 2>&1 || true
    rm -rf "$dir"
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"
    # The Unix socket path must fit in 107 bytes.
    ((${#dir} < 80)) || die "directory path too long for a Unix socket: $dir"
    printf 'floe-test-%s\n' "$RANDOM$RANDOM" > "$dir/password"
    if [[ $(id -u) -eq 0 ]]; then chown -R postgres "$dir"; fi
    chmod 700 "$dir"
    as_server "$bindir/initdb" -D "$dir/data" -U floe --pwfile="$dir/password" \
      --auth=scram-sha-256 -E UTF8 --no-sync > "$dir/initdb.log" 2>&1 ||
      die "initdb failed: $(tail -n 5 "$dir/initdb.log")"
    start_server
    PGPASSWORD="$(cat "$dir/password")" as_server "$bindir/createdb" -h "$dir" -U floe floe ||
      die "createdb failed"
    chmod 755 "$dir"
    chmod 644 "$dir/password"
    echo "jdbc:postgresql:///floe?host=$dir" | tee "$dir/uri"
    ;;
  stop)
    [[ -d "$dir/data" ]] && as_server "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop > /dev/null 2>&1 || true
    rm -rf "$dir"
    ;;
  pause)
    as_server "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop > /dev/null || die "cannot stop the server in $dir"
    ;;
  resume)
    start_server
    ;;
  *) die "unknown command $cmd (start|stop|pause|resume)" ;;
esac
