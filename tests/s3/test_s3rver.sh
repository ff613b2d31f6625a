#!/usr/bin/env bash
# A throwaway S3 server for the tests (s3rver from npm, installed by scripts/install-deps.sh):
#   test_s3rver.sh start DIR [BUCKET...]   runs it in the background on 127.0.0.1 (a free port)
#                              with these buckets; prints the endpoint and writes it to
#                              DIR/endpoint; access key/secret S3RVER
#   test_s3rver.sh stop DIR    stops it and removes DIR
set -euo pipefail
die() {
  echo "test_s3rver: $*" >&2
  exit 1
}
[[ $# -ge 2 ]] || die "usage: test_s3rver.sh start DIR [BUCKET...] | stop DIR"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cmd=$1
dir=$2
shift 2
case "$cmd" in
  start)
    rm -rf "$dir"
    mkdir -p "$dir"
    nohup node "$here/s3rver.mjs" "$dir" "$@" > "$dir/server.log" 2>&1 &
    echo $! > "$dir/pid"
    for _ in $(seq 1 300); do
      [[ -f "$dir/endpoint" ]] && break
      kill -0 "$(cat "$dir/pid")" 2> /dev/null || die "s3rver exited: $(tail -n 5 "$dir/server.log")"
      sleep 0.1
    done
    [[ -f "$dir/endpoint" ]] || die "s3rver did not start in 30 s: $(tail -n 5 "$dir/server.log")"
    cat "$dir/endpoint"
    ;;
  stop)
    [[ -f "$dir/pid" ]] && kill "$(cat "$dir/pid")" 2> /dev/null || true
    rm -rf "$dir"
    ;;
  *) die "unknown command $cmd (start|stop)" ;;
esac
