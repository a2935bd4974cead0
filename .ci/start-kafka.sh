#!/usr/bin/env bash
# Starts a single-node Apache Kafka 3.9.2 broker (KRaft) for the tests from Maven Central jars, no Docker.
#
#   .ci/start-kafka.sh <workdir>
#
# Prints exactly one line on stdout, `KAFKA_BROKERS=127.0.0.1:<port>`, once the broker accepts clients.
# Everything else goes to stderr and to <workdir>/kafka.log. The broker's pid is in <workdir>/kafka.pid;
# stop it with .ci/stop-kafka.sh <workdir>. Each start begins from empty storage, unless KAFKA_KEEP_DATA=1 and
# <workdir> holds a broker's storage already (a restart of the same broker, as the broker-restart test does).
#
# Environment: KAFKA_PORT (default 19092), KAFKA_CONTROLLER_PORT (default KAFKA_PORT + 1),
# KAFKA_START_TIMEOUT seconds (default 90), KAFKA_KEEP_DATA (default 0).
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 <workdir>" >&2
  exit 2
fi

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$1"
workdir="$(cd "$1" && pwd)"
port="${KAFKA_PORT:-19092}"
controller_port="${KAFKA_CONTROLLER_PORT:-$((port + 1))}"
timeout_s="${KAFKA_START_TIMEOUT:-90}"
lib="$workdir/kafka-lib"
data="$workdir/kafka-data"
props="$workdir/kafka-server.properties"
log="$workdir/kafka.log"
pidfile="$workdir/kafka.pid"

say() { echo "start-kafka: $*" >&2; }
fail() {
  say "ERROR: $*"
  exit 1
}
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

command -v java >/dev/null || fail "java not found (Kafka 3.9 needs Java 17)"

if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
  running_port="$(sed -n 's|^advertised.listeners=PLAINTEXT://127.0.0.1:||p' "$props")"
  say "a broker started from $workdir is already running (pid $(cat "$pidfile")); reusing it"
  echo "KAFKA_BROKERS=127.0.0.1:$running_port"
  exit 0
fi
rm -f "$pidfile"
for p in "$port" "$controller_port"; do
  if port_in_use "$p"; then fail "127.0.0.1:$p is already in use; set KAFKA_PORT / KAFKA_CONTROLLER_PORT"; fi
done

# The jars: copied once per workdir; Maven's own cache (~/.m2) makes later copies offline.
if [ ! -f "$lib/.complete" ]; then
  command -v mvn >/dev/null || fail "mvn not found: it copies the broker jars from Maven Central"
  say "copying the Kafka broker jars into $lib"
  rm -rf "$lib"
  started=$SECONDS
  mvn -B -q -Dstyle.color=never -f "$here/kafka/pom.xml" \
    org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$lib" >&2 ||
    fail "mvn could not copy the Kafka jars (see above)"
  touch "$lib/.complete"
  say "jars ready in $((SECONDS - started)) s"
fi

keep_data=0
if [ "${KAFKA_KEEP_DATA:-0}" = 1 ] && [ -f "$data/meta.properties" ]; then keep_data=1; fi
if [ "$keep_data" = 0 ]; then
  rm -rf "$data"
  mkdir -p "$data"
fi
sed -e "s|@PORT@|$port|g" -e "s|@CONTROLLER_PORT@|$controller_port|g" -e "s|@DATA_DIR@|$data|g" \
  "$here/kafka/server.properties.template" >"$props"

# Serial GC and C1-only JIT: start-up drops from ~9 s to ~4 s on 2 cores; a test broker needs no more.
java_opts=(
  -Xms256m -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:+ExitOnOutOfMemoryError
  -Djava.awt.headless=true
  "-Dlog4j.configuration=file:$here/kafka/log4j.properties"
  -cp "$lib/*"
)

started=$SECONDS
: >"$log"
if [ "$keep_data" = 0 ]; then
# A cluster id is 16 random bytes in URL-safe base64, as `StorageTool random-uuid` prints (without a JVM).
cluster_id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
# `--cluster-id=…` in one word: an id may begin with `-`, which the option parser would take for an option.
java "${java_opts[@]}" kafka.tools.StorageTool format --cluster-id="$cluster_id" -c "$props" >>"$log" 2>&1 ||
  fail "StorageTool format failed (see $log)"
fi

setsid nohup java "${java_opts[@]}" kafka.Kafka "$props" >>"$log" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$pidfile"
say "broker pid $pid, log $log; waiting up to ${timeout_s} s for it to start"

deadline=$((SECONDS + timeout_s))
until grep -q 'Kafka Server started' "$log"; do
  if ! kill -0 "$pid" 2>/dev/null; then
    tail -n 40 "$log" >&2
    rm -f "$pidfile"
    fail "the broker exited during start-up (log above, full log in $log)"
  fi
  if [ "$SECONDS" -ge "$deadline" ]; then
    tail -n 40 "$log" >&2
    kill "$pid" 2>/dev/null || true
    rm -f "$pidfile"
    fail "the broker did not log 'Kafka Server started' within ${timeout_s} s (log above, full log in $log)"
  fi
  sleep 0.2
done
port_in_use "$port" || fail "the broker logged its start but 127.0.0.1:$port does not accept connections"

say "broker ready on 127.0.0.1:$port in $((SECONDS - started)) s"
echo "KAFKA_BROKERS=127.0.0.1:$port"
