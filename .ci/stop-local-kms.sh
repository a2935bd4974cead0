#!/usr/bin/env bash
# Stops the local-kms started by .ci/start-local-kms.sh <workdir>: SIGTERM, then SIGKILL after a grace period.
#
#   .ci/stop-local-kms.sh <workdir>
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 <workdir>" >&2
  exit 2
fi

pid_file="$1/local-kms.pid"
say() { echo "stop-local-kms: $*" >&2; }

if [[ ! -f "$pid_file" ]]; then
  say "not running (no $pid_file)"
  exit 0
fi

pid="$(cat "$pid_file")"
if ! kill -0 "$pid" 2>/dev/null; then
  say "not running (pid $pid is gone)"
  rm -f "$pid_file"
  exit 0
fi

kill -TERM "$pid"
for _ in $(seq 1 50); do
  if ! kill -0 "$pid" 2>/dev/null; then
    rm -f "$pid_file"
    say "stopped (pid $pid)"
    exit 0
  fi
  sleep 0.2
done

say "pid $pid ignored SIGTERM for 10 s; killing it"
kill -KILL "$pid" 2>/dev/null || true
rm -f "$pid_file"
