#!/usr/bin/env bash
# Builds (when missing or stale) and starts local-kms, a server that speaks AWS KMS's API, for the tests of the
# KMS key wrapper (test/contracts/key-wrapper.kms.test.ts) and the platform run with KMS_KEY_ID.
#
#   .ci/start-local-kms.sh <workdir>
#
# The binary, its data folder (emptied on every start: it is a test server), local-kms.log and local-kms.pid
# live in <workdir>. Listens on 127.0.0.1:${LOCAL_KMS_PORT:-4599}. Prints exactly one line on stdout,
# KMS_URL=http://127.0.0.1:<port> ; everything else goes to stderr and local-kms.log.
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 <workdir>" >&2
  exit 2
fi

source_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/local-kms" && pwd)"
mkdir -p "$1"
workdir="$(cd "$1" && pwd)"
port="${LOCAL_KMS_PORT:-4599}"
timeout_seconds="${LOCAL_KMS_START_TIMEOUT:-30}"
binary="$workdir/local-kms"
stamp="$workdir/local-kms.source-sha256"
pid_file="$workdir/local-kms.pid"
log_file="$workdir/local-kms.log"
data_dir="$workdir/local-kms-data"

say() { echo "start-local-kms: $*" >&2; }

accepts_connections() { (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }

if [[ -f "$pid_file" ]] && kill -0 "$(cat "$pid_file")" 2>/dev/null; then
  say "already running (pid $(cat "$pid_file")); stop it first with .ci/stop-local-kms.sh $workdir"
  exit 1
fi
if accepts_connections; then
  say "port $port on 127.0.0.1 is already in use; set LOCAL_KMS_PORT to a free port"
  exit 1
fi

# A content hash rather than file times: a checkout touches every file's time.
source_hash="$(cat "$source_dir/go.mod" "$source_dir/go.sum" | sha256sum | cut -d' ' -f1)"
if [[ ! -x "$binary" || ! -f "$stamp" || "$(cat "$stamp")" != "$source_hash" ]]; then
  command -v go >/dev/null || { say "the Go toolchain is needed to build local-kms; 'go' is not on PATH"; exit 1; }
  say "building local-kms into $binary…"
  (cd "$source_dir" && CGO_ENABLED=0 go build -mod=readonly -buildvcs=false -trimpath -o "$binary.partial" github.com/nsmithuk/local-kms) >&2
  mv "$binary.partial" "$binary"
  echo "$source_hash" >"$stamp"
fi

rm -rf "$data_dir"
mkdir -p "$data_dir"
: >"$log_file"
# No seed file: the tests make their keys through the API (KMS_SEED_PATH names one that does not exist).
setsid env PORT="$port" KMS_DATA_PATH="$data_dir" KMS_SEED_PATH="$data_dir/no-seed.yaml" KMS_REGION=eu-west-2 \
  "$binary" </dev/null >>"$log_file" 2>&1 &
server_pid=$!
echo "$server_pid" >"$pid_file"

deadline=$((SECONDS + timeout_seconds))
until accepts_connections; do
  if ! kill -0 "$server_pid" 2>/dev/null; then
    say "local-kms exited during start-up; last lines of $log_file:"
    tail -n 20 "$log_file" >&2
    rm -f "$pid_file"
    exit 1
  fi
  if ((SECONDS >= deadline)); then
    say "local-kms did not accept connections on 127.0.0.1:$port within ${timeout_seconds} s; see $log_file"
    kill "$server_pid" 2>/dev/null || true
    rm -f "$pid_file"
    exit 1
  fi
  sleep 0.2
done

say "local-kms listening on 127.0.0.1:$port (pid $server_pid, log $log_file)"
echo "KMS_URL=http://127.0.0.1:$port"
