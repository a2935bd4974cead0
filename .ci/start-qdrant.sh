#!/usr/bin/env bash
# Starts the Qdrant server built for the tests (../shared/servers/qdrant, release v1.19.0; no registry ships
# one) on throw-away storage and free ports, no Docker.
#
#   .ci/start-qdrant.sh <workdir>
#
# Prints exactly one line on stdout, `QDRANT_URL=http://127.0.0.1:<port>`, once /readyz answers. Everything
# else goes to stderr; the server's log is <workdir>/qdrant/qdrant.log, its pid in <workdir>/qdrant.pid (stop
# it with .ci/stop-qdrant.sh <workdir>). The storage (<workdir>/qdrant) is emptied on every start.
#
# Environment: QDRANT_SERVER_DIR, the folder of the server's start.sh (default ../shared/servers/qdrant beside
# the repository); QDRANT_PORT (default: a free port; gRPC takes another free one).
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 <workdir>" >&2
  exit 2
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$1"
workdir="$(cd "$1" && pwd)"
server_dir="${QDRANT_SERVER_DIR:-$root/../shared/servers/qdrant}"
start_script="$server_dir/start.sh"
storage="$workdir/qdrant"
pid_file="$workdir/qdrant.pid"

say() { echo "start-qdrant: $*" >&2; }

if [[ ! -x "$start_script" ]]; then
  say "ERROR: no Qdrant server at $start_script"
  say "ERROR: CI runs the Qdrant suites on the server built from Qdrant's source (docs/operations.md, Tests and benchmarks);"
  say "ERROR: put it there or set QDRANT_SERVER_DIR to the folder that holds its start.sh"
  exit 1
fi

if [[ -f "$pid_file" ]] && kill -0 "$(cat "$pid_file")" 2>/dev/null; then
  say "already running (pid $(cat "$pid_file")); stop it first with .ci/stop-qdrant.sh $workdir"
  exit 1
fi

# A port nobody listens on now, as the kernel hands them out.
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
http_port="${QDRANT_PORT:-$(free_port)}"
grpc_port="$(free_port)"
while [[ "$grpc_port" == "$http_port" ]]; do grpc_port="$(free_port)"; done

rm -rf "$storage"
mkdir -p "$storage"
started=$SECONDS
# start.sh returns once /readyz answers and prints "QDRANT_URL=… PID=…"; the server runs in its own group.
line="$("$start_script" "$storage" "$http_port" "$grpc_port")" || {
  say "the server did not start (log: $storage/qdrant.log)"
  exit 1
}
pid="$(sed -n 's/.*PID=\([0-9]*\).*/\1/p' <<<"$line")"
url="$(sed -n 's/^QDRANT_URL=\([^ ]*\).*/\1/p' <<<"$line")"
if [[ -z "$pid" || -z "$url" ]]; then
  say "start.sh printed no QDRANT_URL and PID: $line"
  exit 1
fi
echo "$pid" >"$pid_file"

say "Qdrant $(curl -fsS "$url/" | sed -n 's/.*"version":"\([^"]*\)".*/\1/p') ready on $url in $((SECONDS - started)) s (pid $pid, log $storage/qdrant.log)"
echo "QDRANT_URL=$url"
