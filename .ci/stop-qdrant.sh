#!/usr/bin/env bash
# Stops the Qdrant server .ci/start-qdrant.sh <workdir> started: SIGTERM to its process group, then SIGKILL
# after QDRANT_STOP_TIMEOUT seconds (default 20). Succeeds when none from <workdir> is running.
#
#   .ci/stop-qdrant.sh <workdir>
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 <workdir>" >&2
  exit 2
fi

pid_file="$1/qdrant.pid"
timeout_s="${QDRANT_STOP_TIMEOUT:-20}"
say() { echo "stop-qdrant: $*" >&2; }
# kill -0 also answers for a zombie: the server's parent (start.sh) is gone, so ask /proc for its state.
running() { [[ -r "/proc/$1/stat" ]] && [[ "$(sed 's/.*) \(.\).*/\1/' "/proc/$1/stat")" != Z ]]; }

if [[ ! -f "$pid_file" ]]; then
  say "not running (no $pid_file)"
  exit 0
fi
pid="$(cat "$pid_file")"
if ! running "$pid"; then
  say "not running (pid $pid is gone)"
  rm -f "$pid_file"
  exit 0
fi

kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid"
deadline=$((SECONDS + timeout_s))
while running "$pid"; do
  if ((SECONDS >= deadline)); then
    say "pid $pid ignored SIGTERM for ${timeout_s} s; killing it"
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    break
  fi
  sleep 0.2
done
rm -f "$pid_file"
say "stopped (pid $pid)"
