#!/usr/bin/env bash
# Stops the broker that .ci/start-kafka.sh <workdir> started: SIGTERM (controlled shutdown), then SIGKILL
# after KAFKA_STOP_TIMEOUT seconds (default 30). Succeeds when no broker from <workdir> is running.
#
#   .ci/stop-kafka.sh <workdir>
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 <workdir>" >&2
  exit 2
fi

pidfile="$1/kafka.pid"
timeout_s="${KAFKA_STOP_TIMEOUT:-30}"
say() { echo "stop-kafka: $*" >&2; }

if [ ! -f "$pidfile" ]; then
  say "no $pidfile: nothing to stop"
  exit 0
fi
pid="$(cat "$pidfile")"
if ! kill -0 "$pid" 2>/dev/null; then
  say "broker pid $pid is not running"
  rm -f "$pidfile"
  exit 0
fi

kill -TERM "$pid"
deadline=$((SECONDS + timeout_s))
while kill -0 "$pid" 2>/dev/null; do
  if [ "$SECONDS" -ge "$deadline" ]; then
    say "broker pid $pid still running after ${timeout_s} s; killing it"
    kill -KILL "$pid" 2>/dev/null || true
    break
  fi
  sleep 0.2
done
rm -f "$pidfile"
say "broker pid $pid stopped"
