#!/usr/bin/env bash
# Stops the test server whose pid a start script wrote: SIGTERM, then SIGKILL after 10 s.
#
#   .ci/stop-by-pid-file.sh <name> <pid file>
#
# Succeeds when it is not running (no pid file, or its process is gone); removes the pid file.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 <name> <pid file>" >&2
  exit 2
fi

name="$1"
pid_file="$2"
say() { echo "stop-$name: $*" >&2; }

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
