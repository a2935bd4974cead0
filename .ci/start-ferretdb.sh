#!/usr/bin/env bash
# Builds (when missing or stale) and starts FerretDB 1.24 on SQLite as the MongoDB-wire server for tests.
#
#   .ci/start-ferretdb.sh <workdir>
#
# The binary, its data folder (emptied on every start: it is a test server), ferretdb.log and ferretdb.pid
# live in <workdir>. Listens on 127.0.0.1:${FERRETDB_PORT:-27027}. Prints exactly one line on stdout,
# MONGO_URL=mongodb://127.0.0.1:<port>/ ; everything else goes to stderr and ferretdb.log.
# FERRETDB_START_TIMEOUT (seconds, default 60) bounds the wait for the server to accept connections;
# FERRETDB_LOG_LEVEL (default error: FerretDB logs every failed command, expected ones too, at warn).
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 <workdir>" >&2
  exit 2
fi

source_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/ferretdb" && pwd)"
mkdir -p "$1"
workdir="$(cd "$1" && pwd)"
port="${FERRETDB_PORT:-27027}"
timeout_seconds="${FERRETDB_START_TIMEOUT:-60}"
log_level="${FERRETDB_LOG_LEVEL:-error}"
binary="$workdir/ferretdb"
stamp="$workdir/ferretdb.source-sha256"
pid_file="$workdir/ferretdb.pid"
log_file="$workdir/ferretdb.log"
data_dir="$workdir/ferretdb-data"
url="mongodb://127.0.0.1:$port/"

say() { echo "start-ferretdb: $*" >&2; }

accepts_connections() { (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }

if [[ -f "$pid_file" ]] && kill -0 "$(cat "$pid_file")" 2>/dev/null; then
  say "already running (pid $(cat "$pid_file")); stop it first with .ci/stop-ferretdb.sh $workdir"
  exit 1
fi

if accepts_connections; then
  say "port $port on 127.0.0.1 is already in use; set FERRETDB_PORT to a free port"
  exit 1
fi

# A content hash rather than file times: a checkout touches every file's time.
source_hash="$(cat "$source_dir/go.mod" "$source_dir/go.sum" "$source_dir/main.go" | sha256sum | cut -d' ' -f1)"
if [[ ! -x "$binary" || ! -f "$stamp" || "$(cat "$stamp")" != "$source_hash" ]]; then
  if ! command -v go >/dev/null; then
    say "the Go toolchain is needed to build FerretDB (https://go.dev/dl/); 'go' is not on PATH"
    exit 1
  fi
  say "building FerretDB into $binary (the first build takes minutes)…"
  build_started=$SECONDS
  (cd "$source_dir" && CGO_ENABLED=0 go build -mod=readonly -buildvcs=false -trimpath -o "$binary.partial" .) >&2
  mv "$binary.partial" "$binary"
  echo "$source_hash" >"$stamp"
  say "built in $((SECONDS - build_started)) s"
fi

rm -rf "$data_dir"
mkdir -p "$data_dir"
: >"$log_file"

# setsid: the server must outlive this script and the shell that called it.
setsid "$binary" -listen "127.0.0.1:$port" -data "$data_dir" -log-level "$log_level" </dev/null >>"$log_file" 2>&1 &
server_pid=$!
echo "$server_pid" >"$pid_file"

deadline=$((SECONDS + timeout_seconds))
until accepts_connections; do
  if ! kill -0 "$server_pid" 2>/dev/null; then
    say "FerretDB exited during start-up; last lines of $log_file:"
    tail -n 20 "$log_file" >&2
    rm -f "$pid_file"
    exit 1
  fi
  if ((SECONDS >= deadline)); then
    say "FerretDB did not accept connections on 127.0.0.1:$port within ${timeout_seconds} s; see $log_file"
    tail -n 20 "$log_file" >&2
    kill "$server_pid" 2>/dev/null || true
    rm -f "$pid_file"
    exit 1
  fi
  sleep 0.2
done

say "FerretDB listening on 127.0.0.1:$port (pid $server_pid, log $log_file)"
echo "MONGO_URL=$url"
